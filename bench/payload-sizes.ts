// A payload-size recorder for benchmarks and workflow tests: the size of every payload a workflow
// run sends or receives, by kind, and the largest of each kind with the workflow (or activity,
// query, signal) it came from. Sizes are the SDK's own serialisation (the default payload
// converter's bytes: data plus metadata), measured where the payload is made:
//   - in the workflow sandbox (bench/payload-sizes-workflow.ts, bundled as an interceptor module
//     and reporting through a sink): the continue-as-new carry, workflow input and result, child
//     workflow input, signal and update input, query result;
//   - where the activity runs (an activity interceptor): activity input and result, so a result
//     too large for the server is still measured.
// It lives in bench/ (with the stubs) because imports point down: tests may use bench/, the
// benchmarks may not use test/.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Context } from '@temporalio/activity';
import { DefaultLogger, bundleWorkflowCode, type ActivityInboundCallsInterceptor, type InjectedSinks, type WorkerOptions, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { workflowsPath } from '../worker/worker.js';
import { payloadBytes } from './payload-bytes.js';
import type { PayloadSizeSinks, WorkflowPayloadKind } from './payload-sizes-workflow.js';

export type PayloadKind = WorkflowPayloadKind | 'activity input' | 'activity result';
export const PAYLOAD_KINDS: PayloadKind[] = ['carry', 'activity input', 'activity result', 'query result', 'signal input', 'update input', 'child input', 'workflow input', 'workflow result'];

export interface PayloadRecord {
  kind: PayloadKind;
  /** The activity type, query, signal or update name, or the workflow type. */
  name: string;
  /** The workflow it belongs to (for an activity: the workflow that called it). */
  workflowId: string;
  bytes: number;
}

export class PayloadSizes {
  private readonly max = new Map<PayloadKind, PayloadRecord>();
  private readonly counts = new Map<PayloadKind, number>();
  /** Called on every record (a test can stop a run at the first payload over its budget). */
  onRecord?: (r: PayloadRecord) => void;

  record(r: PayloadRecord): void {
    this.counts.set(r.kind, (this.counts.get(r.kind) ?? 0) + 1);
    if (r.bytes > (this.max.get(r.kind)?.bytes ?? -1)) this.max.set(r.kind, r);
    this.onRecord?.(r);
  }

  /** The largest payload of a kind (undefined: none seen). */
  largest(kind: PayloadKind): PayloadRecord | undefined {
    return this.max.get(kind);
  }

  /** The largest payload of any kind. */
  largestOfAll(): PayloadRecord | undefined {
    return [...this.max.values()].reduce<PayloadRecord | undefined>((a, b) => (!a || b.bytes > a.bytes ? b : a), undefined);
  }

  /** How many were recorded (a workflow task that fails and is retried records its payloads again). */
  count(kind: PayloadKind): number {
    return this.counts.get(kind) ?? 0;
  }

  /** One line per kind seen: its largest payload and where it came from. */
  lines(): string[] {
    return PAYLOAD_KINDS.filter((k) => this.max.has(k)).map((k) => {
      const r = this.max.get(k)!;
      return `${k}: ${kib(r.bytes)} (${r.name}, ${r.workflowId}; ${this.count(k)} seen)`;
    });
  }

  /**
   * What a worker needs to record into this: the sink the sandbox half reports to and the
   * activity interceptor. The workflow code must be bundled with the sandbox half (recordingBundle).
   */
  workerOptions(): Pick<WorkerOptions, 'sinks' | 'interceptors'> {
    const sinks: InjectedSinks<PayloadSizeSinks> = {
      payloadSizes: {
        record: { fn: (info, kind, name, bytes) => this.record({ kind, name, workflowId: info.workflowId, bytes }), callDuringReplay: false },
      },
    };
    const activity = (): ActivityInboundCallsInterceptor => ({
      execute: async (input, next) => {
        const info = Context.current().info;
        const at = { name: info.activityType, workflowId: info.workflowExecution?.workflowId ?? '' };
        this.record({ kind: 'activity input', ...at, bytes: payloadBytes(input.args) });
        const result = await next(input);
        this.record({ kind: 'activity result', ...at, bytes: payloadBytes([result]) });
        return result;
      },
    });
    return { sinks, interceptors: { activity: [() => ({ inbound: activity() })] } };
  }
}

export const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;

/** The sandbox half, as a path webpack can bundle (the .js next to this file when built, else the source). */
export function recorderModule(): string {
  const js = fileURLToPath(new URL('./payload-sizes-workflow.js', import.meta.url));
  return existsSync(js) ? js : js.replace(/\.js$/, '.ts');
}

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;

/** The real workflows bundled with the recorder's interceptors (once per process: webpack takes seconds). */
export function recordingBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflowCode({ workflowsPath: workflowsPath(), workflowInterceptorModules: [recorderModule()], logger: new DefaultLogger('WARN') });
  return bundle;
}
