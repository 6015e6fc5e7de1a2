// Liveness heartbeats: while any activity runs, the worker heartbeats for it every third of its
// heartbeat timeout, at least every LIVENESS_BEAT_MS apart (with the activity's own last details, so
// progress shown in the Web UI is kept). A step then carries a heartbeat timeout whatever it does, and
// a worker that dies (SIGKILL, OOM, node loss) costs its steps the heartbeat timeout, not their
// startToClose (30 s for short steps, hours for the waits that heartbeat only between segments).
// Short steps (10 s) beat every 3.3 s; the watches (60 s, workflows/proxies.ts) every 20 s, their own
// heartbeats (a watch's tick every few seconds) held back to that beat, so hundreds of idle watches
// keep the server as quiet as no watch. Measured by the chaos runner (bench/chaos/).
import type { Context } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';

/** The shortest interval between liveness beats (and the interval of an activity without a heartbeat timeout). */
export const LIVENESS_BEAT_MS = 2000;

/** An activity with a heartbeat timeout this long or longer is a watch (workflows/proxies.ts): its own heartbeats wait for the beat. */
export const WATCH_FROM_MS = 30_000;

/** A third of the activity's heartbeat timeout, at least LIVENESS_BEAT_MS. */
export function livenessBeatMs(heartbeatTimeoutMs: number | undefined): number {
  return heartbeatTimeoutMs ? Math.max(LIVENESS_BEAT_MS, Math.floor(heartbeatTimeoutMs / 3)) : LIVENESS_BEAT_MS;
}

export const livenessHeartbeat: ActivityInterceptorsFactory = (ctx: Context) => ({
  inbound: {
    async execute(input, next) {
      // The SDK's heartbeat goes through this function; wrapping it keeps the activity's own details.
      const c = ctx as unknown as { heartbeatFn: (details?: unknown) => void; info?: { heartbeatTimeoutMs?: number } };
      const own = c.heartbeatFn;
      const every = livenessBeatMs(c.info?.heartbeatTimeoutMs);
      const watch = (c.info?.heartbeatTimeoutMs ?? 0) >= WATCH_FROM_MS;
      let last: unknown;
      c.heartbeatFn = (details?: unknown) => {
        last = details;
        // A watch's own ticks (every few seconds) wait for the beat: its heartbeats reach the server every
        // `every`, not every tick. Other steps' go at once (a wave wait's carry a skipPod's cancel back soon).
        if (!watch) own(details);
      };
      const timer = setInterval(() => own(last), every);
      try {
        return await next(input);
      } finally {
        clearInterval(timer);
        c.heartbeatFn = own;
      }
    },
  },
});
