/** The `Pipeline` the Discord layer uses, built on the functions of this folder. */
import { checkAccount } from './account.js';
import { cancelShown, withdrawCancel } from './cancel-button.js';
import { deliverJob } from './post-result.js';
import { entryId } from '../queue/queues.js';
import type { PipelineDeps } from './deps.js';
import { getJob, listJobsOfGuild, queuePositionOf } from './job-rows.js';
import type { Pipeline } from './pipeline.js';
import { acceptRequest, costOfKind, enqueueAccepted } from './accept-request.js';
import type { LoadGuildForRequest } from './requests.js';
import { decideReport, deleteOwnResult, openReports, reportResult } from './reports.js';
import { renameOwnResult } from './rename-result.js';
import { showLikesSoon, toggleLike } from './likes.js';
import { endContestNow, enterableSongs, enterContest, runningContest, standingsNow, startContest } from './contests.js';
import { cancelQueuedJob, closeDeliveryOfCancelled, reopenDelivery } from './transitions.js';

/** `loadGuild`: how a request without the caller's read of its guild opens it (src/guilds/settings.ts). */
export function createPipeline(deps: PipelineDeps, loadGuild: LoadGuildForRequest): Pipeline {
  return {
    accept: (input) => acceptRequest(deps, loadGuild, input),
    enqueue: (accepted) => enqueueAccepted(deps, accepted),
    async submit(input) {
      const accepted = await acceptRequest(deps, loadGuild, input);
      await enqueueAccepted(deps, accepted);
      return accepted;
    },

    async cancel(jobId, by) {
      const job = await getJob(deps.db, jobId);
      if (!job) return { cancelled: false, reason: 'not_found', refunded: 0 };
      if (job.userId !== by.userId && !by.isModerator) return { cancelled: false, reason: 'not_allowed', refunded: 0 };
      if (job.state !== 'queued') {
        const reason = ['submitting', 'submitted'].includes(job.state) ? 'already_submitted' : 'already_final';
        return { cancelled: false, reason, refunded: 0 };
      }
      const cancelled = await cancelQueuedJob(deps, jobId);
      if (!cancelled) return { cancelled: false, reason: 'already_submitted', refunded: 0 };
      await deps.queues.submit.remove(entryId.submit(jobId)).catch(() => {});
      await withdrawCancel(deps, job).catch((err: unknown) => deps.logger.debug({ jobId, err }, 'could not withdraw the cancel button'));
      // The cancel command answers the user itself; the original reply is not edited again.
      await closeDeliveryOfCancelled(deps, jobId);
      const refunded = cancelled.error?.creditsReturned ?? 0;
      return { cancelled: true, refunded };
    },

    cancelShown: (jobId, reply, messageId) => cancelShown(deps, jobId, reply, messageId),

    async redeliver(jobId, reply) {
      const job = await getJob(deps.db, jobId);
      if (!job || !['succeeded', 'failed', 'timed_out'].includes(job.state)) return;
      await reopenDelivery(deps, jobId, reply);
      await deliverJob(deps, jobId);
    },

    async findJob(guildId, jobId) {
      const job = await getJob(deps.db, jobId);
      return job && job.guildId === guildId ? job : undefined;
    },

    listJobs: (guildId, filter) => listJobsOfGuild(deps.db, guildId, filter),

    async queuePosition(jobId) {
      const job = await getJob(deps.db, jobId);
      return job ? queuePositionOf(deps.db, job) : undefined;
    },
    costOf(kind) {
      return costOfKind(deps, kind);
    },
    checkAccount: () => checkAccount(deps, 'command'),
    reportResult: (input) => reportResult(deps, input),
    decideReport: (input) => decideReport(deps, input),
    deleteOwnResult: (input) => deleteOwnResult(deps, input),
    renameOwnResult: (input) => renameOwnResult(deps, input),
    openReports: (guildId, limit, offset) => openReports(deps.db, guildId, limit, offset),
    async likeSong(press, message) {
      const liked = await toggleLike(deps.db, press, deps.now());
      if (liked.outcome === 'toggled' && message && message.messageId !== '') await showLikesSoon(deps, press.jobId, message);
      return liked;
    },
    async holdPress(what, pressId, ms) {
      const key = `${deps.queues.prefix}:press:${what}`;
      if ((await deps.redis.set(key, pressId, 'PX', ms, 'NX')) === 'OK') return true;
      return (await deps.redis.get(key)) === pressId;
    },
    async releasePress(what, pressId) {
      const key = `${deps.queues.prefix}:press:${what}`;
      // Only this press's hold: compared and deleted in one step.
      await deps.redis
        .eval("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0", 1, key, pressId)
        .catch((err: unknown) => deps.logger.warn({ err, what }, 'could not let go of a press'));
    },
    startContest: (input) => startContest(deps, input),
    enterContest: (input) => enterContest(deps.db, input, deps.now()),
    enterableSongs: (guildId, userId) => enterableSongs(deps.db, guildId, userId),
    async contestStatus(guildId) {
      const contest = await runningContest(deps.db, guildId);
      return contest && { contest, ...(await standingsNow(deps.db, contest, deps.now())) };
    },
    endContest: (guildId, options) => endContestNow(deps, guildId, options),
  };
}
