// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// A chat as a model's own Jinja template renders it (@huggingface/jinja,
// the engine of node-llama-cpp's JinjaTemplateChatWrapper), tokenized by
// llama.cpp with its control tokens parsed (BOS first when the file asks
// for it, as tprun and ref.mjs do): the reference for tprun --chat.
// Prints one JSON object a line: rendered, prompt_tokens.
//
//   node chat-ref.mjs TEMPLATE.jinja FILE.gguf SYSTEM USER [...]
//   (SYSTEM "": no system message; four arguments a chat, as many chats
//   as given: loading llama.cpp once)
import { readFileSync } from "node:fs";
import { Template } from "@huggingface/jinja";
import { getLlama, LlamaLogLevel } from "node-llama-cpp";

const args = process.argv.slice(2);
if (!args.length || args.length % 4) {
	console.error("usage: node chat-ref.mjs TEMPLATE.jinja FILE.gguf SYSTEM USER [...]");
	process.exit(2);
}
const llama = await getLlama({ gpu: false, build: "never",
			       logLevel: LlamaLogLevel.error });
for (let i = 0; i < args.length; i += 4) {
	const [tmplFile, file, system, user] = args.slice(i, i + 4);
	const messages = [...(system ? [{ role: "system", content: system }] : []),
			  { role: "user", content: user }];
	const rendered = new Template(readFileSync(tmplFile, "utf8")).render({
		messages, bos_token: "", eos_token: "", add_generation_prompt: true });
	const model = await llama.loadModel({ modelPath: file });
	let ids = [...model.tokenize(rendered, true)];
	if (model.tokens.shouldPrependBosToken && model.tokens.bos != null)
		ids = [model.tokens.bos, ...ids];
	console.log(JSON.stringify({ rendered, prompt_tokens: ids }));
	await model.dispose();
}
await llama.dispose();
