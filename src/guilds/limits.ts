import type { GuildCredits } from '../credits/index.js';

/**
 * The daily cap that holds for a member with these roles: the most generous override among
 * their roles, else the guild's cap, else none (null). The same rule `checkSpendingLimits`
 * enforces; this one only reads it, to tell the member where they stand.
 */
export function effectiveDailyCap(
  credits: Pick<GuildCredits, 'userDailyCap' | 'roleLimits'>,
  roleIds: readonly string[],
): number | null {
  const overrides = credits.roleLimits.filter((limit) => roleIds.includes(limit.roleId)).map((limit) => limit.dailyCap);
  return overrides.length > 0 ? Math.max(...overrides) : credits.userDailyCap;
}
