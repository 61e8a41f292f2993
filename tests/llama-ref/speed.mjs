// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// llama.cpp's speed on a GGUF (node-llama-cpp's prebuilt CPU build), for
// bench-compute.sh: a prompt of P token ids processed in one batch, then
// T tokens greedy-decoded; prints {"prefill_tokens_per_s", "decode_tokens_per_s"}.
// The prompt's time ends with the first generated token (its processing
// and one sample); decode is timed over the tokens after it.
//
//   node speed.mjs FILE.gguf THREADS P T [f32|f16]
//
// The last argument is the K/V cache's type (f32, as tprun's default).
import { getLlama, LlamaLogLevel } from "node-llama-cpp";

const [file, threadsStr, pStr, tStr, kv = "f32"] = process.argv.slice(2);
const threads = Number(threadsStr), P = Number(pStr), T = Number(tStr);
const cacheType = { f32: "F32", f16: "F16" }[kv];
if (!file || !(threads >= 1) || !(P >= 1) || !(T >= 2) || !cacheType) {
	console.error("usage: node speed.mjs FILE.gguf THREADS P T [f32|f16]");
	process.exit(2);
}
const llama = await getLlama({ gpu: false, build: "never",
			       logLevel: LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath: file });
// tprun keeps K and V in F32 (or F16) and attends without flash attention
const ctx = await model.createContext({
	contextSize: P + T + 16, batchSize: P, threads,
	flashAttention: false, experimentalKvCacheKeyType: cacheType,
	experimentalKvCacheValueType: cacheType });
const seq = ctx.getSequence();
// ordinary ids, not control tokens: 1000, 1001, ...
const ids = Array.from({ length: P }, (_, i) => 1000 + (i * 7919) % 20000);
let n = 0, t1 = 0;
const t0 = process.hrtime.bigint();
for await (const tok of seq.evaluate(ids, { temperature: 0 })) {
	void tok;
	if (++n === 1)
		t1 = process.hrtime.bigint();
	if (n >= T)
		break;
}
const t2 = process.hrtime.bigint();
console.log(JSON.stringify({
	prefill_tokens_per_s: P / (Number(t1 - t0) / 1e9),
	decode_tokens_per_s: (n - 1) / (Number(t2 - t1) / 1e9),
}));
await ctx.dispose();
await model.dispose();
await llama.dispose();
