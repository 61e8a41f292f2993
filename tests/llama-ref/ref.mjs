// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// llama.cpp (node-llama-cpp's prebuilt CPU build) as the reference for
// tprun: load a GGUF, tokenize a text prompt (BOS when the file asks for
// it), greedy-decode up to T tokens (stopping at end of generation, as
// tprun does) and print one JSON object: prompt_tokens, tokens, text.
//
//   node ref.mjs FILE.gguf "PROMPT" T
import { getLlama, LlamaLogLevel } from "node-llama-cpp";

const [file, prompt, nstr, flag] = process.argv.slice(2);
const n = Number(nstr);
if (!file || prompt === undefined || !(n >= 1) ||
    (flag !== undefined && flag !== "--logits")) {
	console.error("usage: node ref.mjs FILE.gguf PROMPT TOKENS [--logits]");
	process.exit(2);
}
const llama = await getLlama({ gpu: false, build: "never",
			       logLevel: LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath: file });
let ids = model.tokenize(prompt, false);
if (model.tokens.shouldPrependBosToken && model.tokens.bos != null)
	ids = [model.tokens.bos, ...ids];
// tprun keeps K and V in F32 and attends without flash attention
const ctx = await model.createContext({ contextSize: ids.length + n + 16,
					threads: 1, flashAttention: false,
					experimentalKvCacheKeyType: "F32",
					experimentalKvCacheValueType: "F32" });
const seq = ctx.getSequence();
let logits;
if (flag === "--logits") {
	const last = ids.length - 1;
	const res = await seq.controlledEvaluate(ids.map((t, i) => i === last ?
		[t, { generateNext: { logits: true } }] : t));
	logits = [...res[last].next.logits.entries()];
	await seq.clearHistory();
}
const out = [];
// the EOS token counts among the generated ones, as in tprun
for await (const t of seq.evaluate(ids, { temperature: 0,
					  yieldEogToken: true })) {
	out.push(t);
	if (out.length >= n || model.isEogToken(t))
		break;
}
console.log(JSON.stringify({ prompt_tokens: ids, tokens: out,
			     text: model.detokenize(out), logits }));
await ctx.dispose();
await model.dispose();
await llama.dispose();
