// Each backend's llama-server answers, through the official OpenAI Node client, with
// llama-cli's tokens for the same request: greedy and seeded sampling, cut at
// max_tokens or ended by the model. Completions against `llama-cli -p`; chat against
// `llama-cli -p` on the conversation as `llama-cli -m chat --chat-template` renders it
// with the same template file, and greedy chat against `-m chat` itself.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chatTemplate, runCli, startServer } from './llama_server.mjs';

const completions = [
  { prompt: 'Once upon a time', temperature: 0, top_p: 0.9, seed: 1, max_tokens: 40 },
  { prompt: 'The little dog ran to the park', temperature: 0.8, top_p: 0.9, seed: 42, max_tokens: 48 },
  { prompt: 'Lily and Ben', temperature: 1, top_p: 0, seed: 7, max_tokens: 32 },
  // A story the model ends (run.c's BOS) before max_tokens: finish_reason stop.
  { prompt: 'Tom had a red ball', temperature: 0.8, top_p: 0.9, seed: 5, max_tokens: 200 },
];
const chats = [
  { content: 'Tell me a story about a cat.', temperature: 0, top_p: 0.9, seed: 1, max_tokens: 24 },
  { content: 'Where did the bird fly?', temperature: 0.9, top_p: 0.95, seed: 1234, max_tokens: 30 },
  { content: 'Sing me a song.', temperature: 0, top_p: 0.9, seed: 1, max_tokens: 8 },
];

const sampling = (c) => ['-t', String(c.temperature), '--top-p', String(c.top_p), '-r', String(c.seed)];
const finishReason = (cliStop) => (cliStop === 'max_tokens' || cliStop === 'steps' ? 'length' : 'stop');

for (const backend of ['reference', 'blas', 'graph']) {
  describe(`llama-server -b ${backend} against llama-cli -b ${backend}`, { timeout: 300_000 }, () => {
    let server;
    let client;
    before(async () => {
      server = await startServer(['-b', backend, '--parallel', '2']);
      client = server.client();
    });
    after(() => server.stop());

    test('completions: the same tokens and text', async () => {
      const stops = new Set();
      for (const c of completions) {
        const cli = JSON.parse(
          await runCli(['-b', backend, '-p', c.prompt, ...sampling(c), '-n', String(c.max_tokens), '--format', 'json']),
        );
        const got = await client.completions.create({ model: 'stories', ...c, return_tokens: true });
        const choice = got.choices[0];
        const what = `${c.prompt} (t ${c.temperature}, seed ${c.seed})`;
        assert.deepEqual(choice.tokens, cli.generated_tokens, what);
        // llama-cli's text is what it prints: the prompt, then the generated text.
        assert.equal(cli.text, c.prompt + choice.text, what);
        assert.equal(choice.finish_reason, finishReason(cli.stop_reason), what);
        assert.equal(got.usage.prompt_tokens, cli.prompt_tokens.length, what);
        stops.add(choice.finish_reason);
      }
      assert.deepEqual([...stops].sort(), ['length', 'stop'], 'the cases end both ways');
    });

    test('chat: the same reply as llama-cli on the rendered conversation, and as -m chat when greedy', async () => {
      for (const c of chats) {
        const got = await client.chat.completions.create({
          model: 'stories',
          messages: [{ role: 'user', content: c.content }],
          temperature: c.temperature,
          top_p: c.top_p,
          seed: c.seed,
          max_tokens: c.max_tokens,
          return_tokens: true,
        });
        const what = `${c.content} (t ${c.temperature}, seed ${c.seed})`;
        const reply = got.choices[0].message.content;
        const tokens = got.choices[0].tokens;
        assert.equal(tokens.length, got.usage.completion_tokens, what);

        // The conversation as llama-cli renders it with the same template ...
        const rendered = JSON.parse(
          await runCli(['-m', 'chat', '--chat-template', chatTemplate, '-p', c.content, '--tokenize', '--format', 'json']),
        );
        assert.equal(rendered.prompt_tokens.length, got.usage.prompt_tokens, what);
        // ... is this text with BOS, so llama-cli's generate mode continues it with the
        // same sampler settings and seed.
        const text = `[INST] ${c.content} [/INST]`;
        const cli = JSON.parse(await runCli(['-b', backend, '-p', text, ...sampling(c), '-n', String(c.max_tokens), '--format', 'json']));
        assert.deepEqual(cli.prompt_tokens, rendered.prompt_tokens, what);
        assert.deepEqual(tokens, cli.generated_tokens, what);
        assert.equal(cli.text, text + reply, what);
        assert.equal(got.choices[0].finish_reason, finishReason(cli.stop_reason), what);

        // llama-cli -m chat follows run.c's chat loop, whose sampler also draws at each
        // prompt position: only greedy replies can match it token for token. It has
        // no token limit, only --steps (positions, prompt included: a reply of k
        // tokens takes prompt + k - 1), and ends a reply at an EOS only, where the
        // server also ends one at run.c's BOS (a llama2.c file's end of story, as
        // llama-cli's generate mode does): then -m chat's reply is the server's and
        // that BOS, whose piece is empty.
        if (c.temperature !== 0) continue;
        const stoppedAtBos = got.choices[0].finish_reason === 'stop';
        const steps = got.usage.prompt_tokens + tokens.length - (stoppedAtBos ? 0 : 1);
        const chat = JSON.parse(
          await runCli(['-m', 'chat', '--chat-template', chatTemplate, '-b', backend, '-p', c.content, '-t', '0', '-s', String(steps), '--format', 'json']),
        );
        assert.equal(chat.turns.length, 1, what);
        const turn = chat.turns[0];
        assert.deepEqual(turn.prompt_tokens, rendered.prompt_tokens, what);
        assert.deepEqual(turn.reply_tokens, stoppedAtBos ? [...tokens, rendered.prompt_tokens[0]] : tokens, what);
        assert.equal(turn.text, reply, what);
      }
    });
  });
}
