// Liveness heartbeats: while any activity runs, the worker heartbeats for it every 2 s (with the
// activity's own last details, so progress shown in the Web UI is kept). A step then carries a
// heartbeat timeout whatever it does, and a worker that dies (SIGKILL, OOM, node loss) costs its
// steps the heartbeat timeout, not their startToClose (30 s for short steps, hours for the waits
// that heartbeat only between segments). Measured by the chaos runner (bench/chaos/).
import type { Context } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';

export const LIVENESS_BEAT_MS = 2000;

export const livenessHeartbeat: ActivityInterceptorsFactory = (ctx: Context) => ({
  inbound: {
    async execute(input, next) {
      // The SDK's heartbeat goes through this function; wrapping it keeps the activity's own details.
      const c = ctx as unknown as { heartbeatFn: (details?: unknown) => void };
      const own = c.heartbeatFn;
      let last: unknown;
      c.heartbeatFn = (details?: unknown) => {
        last = details;
        own(details);
      };
      const timer = setInterval(() => own(last), LIVENESS_BEAT_MS);
      try {
        return await next(input);
      } finally {
        clearInterval(timer);
        c.heartbeatFn = own;
      }
    },
  },
});
