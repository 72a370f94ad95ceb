// Batch invariance end to end, through the official OpenAI Node client: the same 16
// requests (different prompts, greedy and seeded sampling, completions and chat,
// streamed or not) sent one at a time, all at once, and all at once in a shuffled
// order to a server with 8 sequences give the same texts and tokens, on the backends
// that claim batch invariance (docs/server.md).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { collect, startServer, waitIdle } from './llama_server.mjs';

const prompts = [
  'Once upon a time', 'The little dog ran to the park', 'Lily and Ben', 'One day, a big bird',
  'Tom had a red ball', 'The sun was hot', 'Sue found a box', 'A cat sat on the mat',
  'Max wanted a cake', 'The tree was tall', 'Mom said no', 'They went to the sea',
];
const chats = ['Tell me a story.', 'What did the frog see?', 'Why was Tim sad?', 'Who is your friend?'];

// Every third request greedy, the others sampled with their own seed and settings.
function sampling(i) {
  if (i % 3 === 0) return { temperature: 0 };
  return { temperature: [0.6, 0.8, 1.0, 1.2][i % 4], top_p: [0.9, 0.95, 0, 0.8][i % 4], seed: 100 + i };
}
const requests = [
  ...prompts.map((prompt, i) => ({ kind: 'completion', body: { model: 'stories', prompt, max_tokens: 24 + (i % 5) * 6, ...sampling(i), return_tokens: true } })),
  ...chats.map((content, i) => ({ kind: 'chat', body: { model: 'stories', messages: [{ role: 'user', content }], max_tokens: 30, ...sampling(i + 1) } })),
];

// A fixed permutation (mulberry32-driven Fisher-Yates): the same order every run.
function shuffled(n, seed) {
  let a = seed;
  const random = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const order = [...Array(n).keys()];
  for (let i = n - 1; i > 0; --i) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

// One request's answer: its text, and for completions its token ids (not streamed).
async function send(client, { kind, body }, stream) {
  if (kind === 'chat') {
    if (stream) return { text: (await collect(await client.chat.completions.create({ ...body, stream: true }))).text };
    return { text: (await client.chat.completions.create(body)).choices[0].message.content };
  }
  if (stream) {
    const { return_tokens, ...rest } = body;
    return { text: (await collect(await client.completions.create({ ...rest, stream: true }))).text };
  }
  const choice = (await client.completions.create(body)).choices[0];
  return { text: choice.text, tokens: choice.tokens };
}

for (const backend of ['graph', 'blas']) {
  describe(`batch invariance on ${backend}, 16 requests on 8 sequences`, { timeout: 300_000 }, () => {
    let server;
    let client;
    before(async () => {
      server = await startServer(['-b', backend, '--parallel', '8']);
      client = server.client();
    });
    after(() => server.stop());

    test('one at a time, all at once, and shuffled give the same texts', async () => {
      const alone = [];
      for (const r of requests) alone.push(await send(client, r, false));
      assert.ok(alone.every((a) => a.text.length > 0));

      const together = await Promise.all(requests.map((r) => send(client, r, false)));
      assert.deepEqual(together, alone, 'all at once');

      // Shuffled, and every other one streamed: the texts still match.
      const order = shuffled(requests.length, 2026);
      const answers = await Promise.all(order.map((i, k) => send(client, requests[i], k % 2 === 1)));
      const byRequest = [];
      order.forEach((i, k) => (byRequest[i] = answers[k].text));
      assert.deepEqual(byRequest, alone.map((a) => a.text), 'shuffled');
      await waitIdle(server);
    });
  });
}
