// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// llama.cpp (node-llama-cpp's prebuilt CPU build) as the reference for
// tprun: load a GGUF, tokenize a text prompt (BOS when the file asks for
// it), greedy-decode up to T tokens (stopping at end of generation, as
// tprun does) and print one JSON object: prompt_tokens, tokens, text
// (and, with --logits, the logits after the prompt).
//
//   node ref.mjs FILE.gguf "PROMPT" T [--logits] [--cache-type f16]
//   node ref.mjs --batch JOBS
//
// The K and V cache is F32 (tprun's default), or F16 with --cache-type
// f16 (llama.cpp's default, tprun --cache-type f16).
//
// --batch answers many questions in one process (loading llama.cpp takes
// 1.5 s of the 1.9 s a single answer costs): JOBS holds NUL-terminated
// fields, six per job: FILE, PROMPT, T, "logits" or "", the cache type
// ("f32" or "f16") and the file the JSON object goes to.  A job that fails writes {"error": ...} there
// instead, and the others still run.  Jobs in a row on the same file load
// it once (the tokenizer-cut models hold large vocabularies: loading one
// costs most of a job).
import { readFileSync, writeFileSync } from "node:fs";
import { getLlama, LlamaLogLevel } from "node-llama-cpp";

function usage() {
	console.error("usage: node ref.mjs FILE.gguf PROMPT TOKENS [--logits] [--cache-type f16]\n" +
		      "       node ref.mjs --batch JOBS");
	process.exit(2);
}

let loaded = { file: null, model: null };
async function modelOf(llama, file) {
	if (loaded.file !== file) {
		if (loaded.model)
			await loaded.model.dispose();
		loaded = { file: null, model: null };
		loaded = { file, model: await llama.loadModel({ modelPath: file }) };
	}
	return loaded.model;
}

const cacheTypes = { f32: "F32", f16: "F16" };

async function answer(llama, file, prompt, n, withLogits, kv) {
	const model = await modelOf(llama, file);
	let ids = model.tokenize(prompt, false);
	if (model.tokens.shouldPrependBosToken && model.tokens.bos != null)
		ids = [model.tokens.bos, ...ids];
	// tprun keeps K and V in F32 (or F16) and attends without flash
	// attention
	const ctx = await model.createContext({
		contextSize: ids.length + n + 16, threads: 1,
		flashAttention: false, experimentalKvCacheKeyType: cacheTypes[kv],
		experimentalKvCacheValueType: cacheTypes[kv] });
	const seq = ctx.getSequence();
	let logits;
	if (withLogits) {
		const last = ids.length - 1;
		const res = await seq.controlledEvaluate(ids.map((t, i) =>
			i === last ? [t, { generateNext: { logits: true } }] : t));
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
	const text = model.detokenize(out);
	await ctx.dispose();
	return JSON.stringify({ prompt_tokens: ids, tokens: out, text, logits });
}

const args = process.argv.slice(2);
let jobs;
if (args[0] === "--batch") {
	if (args.length !== 2)
		usage();
	const f = readFileSync(args[1], "utf8").split("\0");
	f.pop();	// after the last NUL
	if (f.length % 6)
		usage();
	jobs = [];
	for (let i = 0; i < f.length; i += 6)
		jobs.push({ file: f[i], prompt: f[i + 1], n: Number(f[i + 2]),
			    logits: f[i + 3] === "logits", kv: f[i + 4],
			    out: f[i + 5] });
} else {
	const [file, prompt, nstr, ...flags] = args;
	const job = { file, prompt, n: Number(nstr), logits: false, kv: "f32" };
	for (let i = 0; i < flags.length; i++) {
		if (flags[i] === "--logits")
			job.logits = true;
		else if (flags[i] === "--cache-type" && i + 1 < flags.length)
			job.kv = flags[++i];
		else
			usage();
	}
	if (!file || prompt === undefined)
		usage();
	jobs = [job];
}
if (!jobs.every((j) => j.n >= 1 && cacheTypes[j.kv]))
	usage();

const llama = await getLlama({ gpu: false, build: "never",
			       logLevel: LlamaLogLevel.error });
for (const j of jobs) {
	let json;
	try {
		json = await answer(llama, j.file, j.prompt, j.n, j.logits, j.kv);
	} catch (e) {
		if (!j.out)
			throw e;
		json = JSON.stringify({ error: String(e && e.stack || e) });
	}
	if (j.out)
		writeFileSync(j.out, json + "\n");
	else
		console.log(json);
}
if (loaded.model)
	await loaded.model.dispose();
await llama.dispose();
