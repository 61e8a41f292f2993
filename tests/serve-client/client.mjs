// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The official openai client (npm) against tprun serve: completion and
// chat, whole and streamed (greedy, so the stream must add up to the
// whole answer), /v1/models, and a bad request as the client's 400
// error.  Prints TAP.  usage: node client.mjs http://HOST:PORT/v1
//
// node client.mjs URL --chat-only N: the chat, whole and streamed, alone,
// and its usage must count N prompt tokens (the model's chat template
// rendered the messages: template-model.py --count says how many).
import OpenAI from "openai";

const base = process.argv[2];
const chatOnly = process.argv[3] === "--chat-only" ? Number(process.argv[4]) : null;
const client = new OpenAI({ baseURL: base, apiKey: "none", maxRetries: 0, timeout: 120000 });
let n = 0, failed = 0;
function ok(cond, name, detail) {
  n++;
  if (!cond) failed++;
  console.log(`${cond ? "ok" : "not ok"} ${n} - ${name}`);
  if (!cond && detail !== undefined) console.log(`#   ${JSON.stringify(detail)}`);
}
async function attempt(name, fn) {
  try {
    await fn();
  } catch (e) {
    ok(false, `${name}: ${e.constructor.name}: ${e.message}`);
  }
}

const model = "any";
const prompt = "Hello world, the model";
const messages = [{ role: "system", content: "Be brief." }, { role: "user", content: "Say hello" }];

if (chatOnly === null) await attempt("models", async () => {
  const m = await client.models.list();
  ok(m.data.length === 1 && typeof m.data[0].id === "string", "models.list names the model", m.data);
});

let whole = null;
if (chatOnly === null) await attempt("completion", async () => {
  const r = await client.completions.create({ model, prompt, max_tokens: 6, temperature: 0 });
  const c = r.choices[0];
  whole = c.text;
  ok(r.object === "text_completion" && typeof c.text === "string" &&
     r.usage.completion_tokens >= 1 && r.usage.completion_tokens <= 6 &&
     ["stop", "length"].includes(c.finish_reason), "completion: text, usage, finish_reason", r);
});
if (chatOnly === null) await attempt("completion stream", async () => {
  const s = await client.completions.create({ model, prompt, max_tokens: 6, temperature: 0, stream: true });
  let text = "", chunks = 0, finish = null;
  for await (const ch of s) {
    chunks++;
    text += ch.choices[0].text;
    finish = ch.choices[0].finish_reason ?? finish;
  }
  ok(chunks >= 2 && text === whole && finish !== null,
     `completion stream: ${chunks} chunks add up to the whole answer`, { text, whole, finish });
});

let answer = null;
await attempt("chat", async () => {
  const r = await client.chat.completions.create({ model, messages, max_tokens: 6, temperature: 0 });
  const c = r.choices[0];
  answer = c.message.content;
  ok(r.object === "chat.completion" && c.message.role === "assistant" &&
     typeof answer === "string" && r.usage.prompt_tokens > 10, "chat: an assistant message, usage", r);
  if (chatOnly !== null)
    ok(r.usage.prompt_tokens === chatOnly,
       `chat: ${r.usage.prompt_tokens} prompt tokens, as the model's template renders the messages`,
       { want: chatOnly, usage: r.usage });
});
await attempt("chat stream", async () => {
  const s = await client.chat.completions.create({ model, messages, max_tokens: 6, temperature: 0, stream: true });
  let text = "", role = null, chunks = 0, finish = null;
  for await (const ch of s) {
    chunks++;
    role = ch.choices[0].delta.role ?? role;
    text += ch.choices[0].delta.content ?? "";
    finish = ch.choices[0].finish_reason ?? finish;
  }
  ok(role === "assistant" && text === answer && finish !== null,
     `chat stream: ${chunks} chunks add up to the whole answer`, { text, answer, role, finish });
});

if (chatOnly === null) await attempt("bad request", async () => {
  try {
    await client.completions.create({ model, prompt, max_tokens: 0 });
    ok(false, "max_tokens 0 is refused");
  } catch (e) {
    ok(e instanceof OpenAI.APIError && e.status === 400 && /max_tokens/.test(e.message),
       `max_tokens 0: the client's 400 error (${e.message})`);
  }
});

console.log(`1..${n}`);
process.exit(failed ? 1 : 0);
