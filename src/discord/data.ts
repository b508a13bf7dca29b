/**
 * What the command handlers read and write, each function bound to the database: guilds,
 * credits, the library and jobs. Handlers reach data through these and never hold the
 * database itself, so what a command may touch is listed here.
 */
import type { Database } from '../db/client.js';
import {
  applyMonthlyAllowance,
  getBalance,
  getGuildCredits,
  grant,
  guildUsage,
  history,
  latestTake,
  setFrozen,
  setLowBalanceAlert,
  setMonthlyAllowance,
  setUserDailyCap,
  spentToday,
  take,
  usage,
  writeLedgerCsv,
} from '../credits/index.js';
import { cooldownLeft } from '../guilds/access.js';
import { addBlockedWords, listBlockedWords, removeBlockedWords } from '../guilds/blocklist.js';
import { blockMember, listBlocks, memberBlockOf, unblockMember } from '../guilds/blocks.js';
import { notifyChoiceOf, setNotifyWhenDone } from '../guilds/member-settings.js';
import { changeSettings, findGuild, loadGuild } from '../guilds/settings.js';
import { deleteVoice, findVoice, listVoices, resolveVoice } from '../guilds/voices.js';
import { claimWelcome, releaseWelcome } from '../guilds/welcome.js';
import { findJobsNamed } from '../pipeline/job-names.js';
import { getJob, jobMakingFile } from '../pipeline/job-rows.js';
import { libraryPage } from '../pipeline/library.js';
import { readChart } from '../pipeline/charts.js';
import { chartPostOf, setChartPost } from '../guilds/chart-posts.js';
import { liveSubscriptionSkus, salesReport } from '../premium/sales.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any arguments after the database
type OnDatabase = (db: Database, ...args: any[]) => unknown;
type Bound<F> = F extends (db: Database, ...args: infer A) => infer R ? (...args: A) => R : never;

function bind<T extends Record<string, OnDatabase>>(db: Database, functions: T): { readonly [K in keyof T]: Bound<T[K]> } {
  const bound: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(functions)) bound[name] = (...args: unknown[]) => fn(db, ...args);
  return Object.freeze(bound) as { readonly [K in keyof T]: Bound<T[K]> };
}

export function dataFacades(db: Database) {
  return {
    guilds: bind(db, { loadGuild, findGuild, changeSettings, cooldownLeft, claimWelcome, releaseWelcome, addBlockedWords, removeBlockedWords, listBlockedWords, blockMember, unblockMember, listBlocks, memberBlockOf, setNotifyWhenDone, notifyChoiceOf }),
    credits: bind(db, {
      getGuildCredits,
      getBalance,
      spentToday,
      usage,
      guildUsage,
      latestTake,
      history,
      writeLedgerCsv,
      grant,
      take,
      setFrozen,
      setUserDailyCap,
      setMonthlyAllowance,
      applyMonthlyAllowance,
      setLowBalanceAlert,
      salesReport,
      liveSubscriptionSkus,
    }),
    library: bind(db, { libraryPage, listVoices, findVoice, resolveVoice, deleteVoice }),
    jobs: bind(db, { getJob, findJobsNamed, jobMakingFile }),
    charts: bind(db, { readChart, chartPostOf, setChartPost }),
  };
}

export type DataFacades = ReturnType<typeof dataFacades>;
