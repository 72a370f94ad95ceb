// llama-server through the official OpenAI Node client: streamed against non-streamed
// answers, usage, logprobs, stop strings split across tokens, more requests than
// sequences, a client that walks away mid-stream, /metrics as Prometheus text, and a
// repeated chat prefix served from the cache (graph backend, --parallel 2).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { collect, startServer, waitIdle } from './llama_server.mjs';
import { parsePrometheus } from './prometheus.mjs';

const story = { model: 'stories', prompt: 'Once upon a time', max_tokens: 40, temperature: 0 };
const sampled = { model: 'stories', prompt: 'The little dog ran to the park', max_tokens: 48, temperature: 0.8, top_p: 0.9, seed: 42 };
const chat = { model: 'stories', messages: [{ role: 'user', content: 'Tell me a story about a cat.' }], max_tokens: 32 };

describe('llama-server with the openai client', { timeout: 300_000 }, () => {
  let server;
  let client;
  before(async () => {
    server = await startServer(['-b', 'graph', '--parallel', '2']);
    client = server.client();
  });
  after(() => server.stop());

  test('streamed text equals non-streamed text (completions and chat)', async () => {
    for (const request of [story, sampled]) {
      const whole = await client.completions.create(request);
      assert.equal(whole.object, 'text_completion');
      assert.equal(whole.model, 'stories');
      assert.ok(whole.choices[0].text.length > 0);
      const streamed = await collect(await client.completions.create({ ...request, stream: true }));
      assert.equal(streamed.text, whole.choices[0].text);
      assert.equal(streamed.finish, whole.choices[0].finish_reason);
      assert.ok(streamed.chunks.length > 1, 'the text came in several chunks');
    }
    for (const request of [{ ...chat, temperature: 0 }, { ...chat, temperature: 1, top_p: 0.95, seed: 7 }]) {
      const whole = await client.chat.completions.create(request);
      assert.equal(whole.object, 'chat.completion');
      assert.equal(whole.choices[0].message.role, 'assistant');
      const streamed = await collect(await client.chat.completions.create({ ...request, stream: true }));
      assert.equal(streamed.chunks[0].choices[0].delta.role, 'assistant');
      assert.equal(streamed.text, whole.choices[0].message.content);
      assert.equal(streamed.finish, whole.choices[0].finish_reason);
    }
  });

  test('usage comes in a stream exactly when asked; prompt tokens are /tokenize\'s', async () => {
    const { tokens } = await server.postJson('/tokenize', { content: story.prompt, add_special: true });
    const whole = await client.completions.create(story);
    assert.equal(whole.usage.prompt_tokens, tokens.length);
    assert.equal(whole.usage.total_tokens, whole.usage.prompt_tokens + whole.usage.completion_tokens);

    const plain = await collect(await client.completions.create({ ...story, stream: true }));
    assert.ok(plain.chunks.every((c) => c.usage == null), 'no usage without stream_options');
    const plainChat = await collect(await client.chat.completions.create({ ...chat, stream: true }));
    assert.ok(plainChat.chunks.every((c) => c.usage == null), 'no usage without stream_options');

    for (const create of [
      (r) => client.completions.create({ ...story, ...r }),
      (r) => client.chat.completions.create({ ...chat, temperature: 0, ...r }),
    ]) {
      const withUsage = await collect(await create({ stream: true, stream_options: { include_usage: true } }));
      const usageChunks = withUsage.chunks.filter((c) => c.usage != null);
      assert.equal(usageChunks.length, 1, 'one usage chunk');
      assert.equal(usageChunks[0], withUsage.chunks.at(-1), 'the usage chunk is the last');
      assert.deepEqual(usageChunks[0].choices, []);
      const again = await create({});
      assert.deepEqual(usageChunks[0].usage.prompt_tokens, again.usage.prompt_tokens);
      assert.deepEqual(usageChunks[0].usage.completion_tokens, again.usage.completion_tokens);
    }
    const streamedStory = await collect(
      await client.completions.create({ ...story, stream: true, stream_options: { include_usage: true } }),
    );
    assert.equal(streamedStory.chunks.at(-1).usage.prompt_tokens, tokens.length);
  });

  test('logprobs\' tokens join to the content', async () => {
    const completion = await client.completions.create({ ...sampled, logprobs: 3 });
    const lp = completion.choices[0].logprobs;
    assert.equal(lp.tokens.length, completion.usage.completion_tokens);
    assert.equal(lp.tokens.join(''), completion.choices[0].text);
    assert.equal(lp.token_logprobs.length, lp.tokens.length);
    assert.ok(lp.token_logprobs.every((v) => v <= 0));

    const reply = await client.chat.completions.create({ ...chat, temperature: 0.7, seed: 3, logprobs: true, top_logprobs: 2 });
    const content = reply.choices[0].logprobs.content;
    assert.equal(content.length, reply.usage.completion_tokens);
    assert.equal(content.map((t) => t.token).join(''), reply.choices[0].message.content);
    for (const t of content) {
      assert.equal(Buffer.from(t.bytes).toString('utf8'), t.token);
      assert.equal(t.top_logprobs.length, 2);
      assert.ok(t.top_logprobs[0].logprob >= t.logprob, 'the sampled token is not above the most likely');
    }
  });

  test('a stop string across a token boundary ends the text before it, streamed or not', async () => {
    const full = await client.completions.create({ ...story, max_tokens: 60, logprobs: 0 });
    const pieces = full.choices[0].logprobs.tokens;
    const text = full.choices[0].text;
    // The first boundary between two pieces of at least two characters each whose
    // four characters around it occur nowhere earlier in the text.
    let stop = null;
    let at = 0;
    for (let i = 0; i + 1 < pieces.length && stop === null; ++i) {
      at += pieces[i].length;
      const [a, b] = [pieces[i], pieces[i + 1]];
      if (i === 0 || a.length < 2 || b.length < 2) continue;
      const candidate = a.slice(-2) + b.slice(0, 2);
      if (text.indexOf(candidate) === at - 2) stop = candidate;
    }
    assert.ok(stop, `no two-token stop string found in ${JSON.stringify(pieces)}`);
    const expected = text.slice(0, text.indexOf(stop));

    const whole = await client.completions.create({ ...story, max_tokens: 60, stop: [stop] });
    assert.equal(whole.choices[0].text, expected);
    assert.equal(whole.choices[0].finish_reason, 'stop');
    const streamed = await collect(await client.completions.create({ ...story, max_tokens: 60, stop, stream: true }));
    assert.equal(streamed.text, expected);
    assert.equal(streamed.finish, 'stop');
    assert.ok(!streamed.text.includes(stop) && !streamed.chunks.some((c) => c.choices[0]?.text.includes(stop)));
    // Its first half never leaks either: the stream ends on the text before it.
    assert.ok(!streamed.text.endsWith(stop.slice(0, 2)));
  });

  test('more concurrent requests than sequences all complete with their own text', async () => {
    const requests = [
      { ...story, max_tokens: 30 },
      { ...sampled, max_tokens: 30 },
      { ...story, prompt: 'Lily and Ben', temperature: 1, top_p: 0, seed: 9, max_tokens: 30 },
      { ...story, prompt: 'One day, a big bird', max_tokens: 30 },
      { ...sampled, prompt: 'Tom had a red ball', seed: 5, max_tokens: 30 },
      { ...story, prompt: 'The sun was hot', temperature: 0.5, top_p: 0.8, seed: 11, max_tokens: 30 },
    ];
    const alone = [];
    for (const r of requests) alone.push((await client.completions.create(r)).choices[0].text);
    // Six at once on two sequences: four wait in the queue; half of them streamed.
    const together = await Promise.all(
      requests.map(async (r, i) =>
        i % 2 ? (await collect(await client.completions.create({ ...r, stream: true }))).text : (await client.completions.create(r)).choices[0].text,
      ),
    );
    assert.deepEqual(together, alone);
    await waitIdle(server);
  });

  test('a client that stops reading after the first chunk frees its sequence', async () => {
    const stream = await client.completions.create({ ...story, max_tokens: 200, ignore_eos: true, stream: true });
    for await (const chunk of stream) {
      assert.ok(chunk.choices[0].text.length > 0);
      break; // leaving the loop aborts the request (the SDK's controller)
    }
    assert.ok(stream.controller.signal.aborted, 'the SDK aborted the stream');
    const slots = await waitIdle(server);
    assert.equal(slots.length, 2);
    // Both sequences serve again.
    const [a, b] = await Promise.all([client.completions.create(story), client.completions.create(sampled)]);
    assert.ok(a.choices[0].text.length > 0 && b.choices[0].text.length > 0);
  });

  test('/metrics parses as Prometheus text and counts the requests', async () => {
    // The parser is strict: it refuses what the format does not allow.
    for (const bad of ['a 1', 'a 1\nb 2\na 3\n', '# TYPE a counter\n# TYPE a gauge\na 1\n', 'a{l=v} 1\n', '# TYPE a counter\na -1\n', '# TYPE a foo\na 1\n']) {
      assert.throws(() => parsePrometheus(bad), undefined, JSON.stringify(bad));
    }
    await waitIdle(server);
    const read = async () => {
      const res = await fetch(`${server.origin}/metrics`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
      return parsePrometheus(await res.text());
    };
    const before = await read();
    for (const [name, family] of before) {
      assert.match(name, /^llama_backends_/);
      assert.ok(family.help.length > 0, `${name} has a HELP text`);
      assert.ok(['counter', 'gauge'].includes(family.type), `${name} is a ${family.type}`);
      if (family.type === 'counter') assert.match(name, /_total$/);
    }
    const value = (m, name) => {
      assert.ok(m.has(name), `${name} is exported`);
      return m.get(name).samples[0].value;
    };
    assert.equal(value(before, 'llama_backends_sequences'), 2);
    assert.equal(value(before, 'llama_backends_requests_processing'), 0);
    assert.ok(value(before, 'llama_backends_tokens_predicted_total') > 0);

    const done = await client.completions.create(sampled);
    // The counters are the engine's as of its last step: wait (bounded) for the one
    // that finished this request, then the increments are exact.
    const deadline = Date.now() + 30_000;
    let now = await read();
    while (value(now, 'llama_backends_requests_finished_total') === value(before, 'llama_backends_requests_finished_total')) {
      assert.ok(Date.now() < deadline, '/metrics did not count the request within 30 s');
      await new Promise((r) => setTimeout(r, 50));
      now = await read();
    }
    assert.equal(value(now, 'llama_backends_requests_finished_total') - value(before, 'llama_backends_requests_finished_total'), 1);
    assert.equal(
      value(now, 'llama_backends_tokens_predicted_total') - value(before, 'llama_backends_tokens_predicted_total'),
      done.usage.completion_tokens,
    );
    assert.equal(
      value(now, 'llama_backends_prompt_tokens_total') - value(before, 'llama_backends_prompt_tokens_total'),
      done.usage.prompt_tokens,
    );
  });

  test('a repeated chat prefix reports cached tokens and gives the same text', async () => {
    const first = await client.chat.completions.create({ ...chat, temperature: 0 });
    const reply = first.choices[0].message.content;
    const followUp = {
      ...chat,
      temperature: 0.9,
      seed: 21,
      messages: [...chat.messages, { role: 'assistant', content: reply }, { role: 'user', content: 'What happened next?' }],
    };
    const cached = await client.chat.completions.create(followUp);
    assert.ok(cached.usage.prompt_tokens_details.cached_tokens > 0, JSON.stringify(cached.usage));
    assert.ok(cached.usage.prompt_tokens_details.cached_tokens < cached.usage.prompt_tokens);

    // The same conversation on a server that has seen nothing: no cached tokens, same text.
    const fresh = await startServer(['-b', 'graph', '--parallel', '1']);
    try {
      const cold = await fresh.client().chat.completions.create(followUp);
      assert.equal(cold.usage.prompt_tokens_details.cached_tokens, 0);
      assert.equal(cold.usage.prompt_tokens, cached.usage.prompt_tokens);
      assert.equal(cached.choices[0].message.content, cold.choices[0].message.content);
    } finally {
      await fresh.stop();
    }
  });
});
