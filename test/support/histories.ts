// Workflow histories as JSON files (the proto3 JSON that `temporal workflow show -o json` and the
// Web UI's download write), for the replay test and its recorder.
//
// Why not @temporalio/common's historyToJSON/historyFromJSON: with this package-lock, npm installs
// protobufjs 8 twice (under @temporalio/common and under @temporalio/proto, as protobufjs 7 holds
// the top level for @grpc/proto-loader), and those helpers hand a type built by one copy to the
// other's JSON codec, which refuses it ("type must be a Type"). Here the codec is taken from the
// copy @temporalio/proto itself uses, so the two always match.
import { createRequire } from 'node:module';
import * as proto from '@temporalio/proto';
import { patchProtobufRoot } from '@temporalio/proto/lib/patch-protobuf-root.js';

type History = proto.temporal.api.history.v1.IHistory;
interface ProtoJson {
  toJson(type: unknown, message: unknown): unknown;
  fromJson(type: unknown, json: unknown, options?: { ignoreUnknownFields?: boolean }): unknown;
}

const require = createRequire(import.meta.url);
const fromProto = createRequire(require.resolve('@temporalio/proto'));
const codec = fromProto('protobufjs/ext/protojson') as ProtoJson;
const historyType = (patchProtobufRoot(proto) as unknown as { lookupType(name: string): unknown }).lookupType('temporal.api.history.v1.History');

export function historyToJson(history: History): unknown {
  return codec.toJson(historyType, proto.temporal.api.history.v1.History.fromObject(history));
}

export function historyFromJson(json: unknown): History {
  // Unknown fields (a newer server's) are ignored, as the SDK's own loader does.
  return codec.fromJson(historyType, json, { ignoreUnknownFields: true }) as History;
}
