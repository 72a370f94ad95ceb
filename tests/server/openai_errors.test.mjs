// llama-server's errors as the official OpenAI Node client raises them: the SDK's
// error class for the status, the status, and the `type` of OpenAI's error body
// (400, 401 with --api-key, 404, 413 past --max-body).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { startServer } from './llama_server.mjs';

const key = 'test-key-1';
const maxBody = 4096;

async function raised(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  assert.fail('the request succeeded');
}

describe('llama-server errors through the openai client', { timeout: 120_000 }, () => {
  let server;
  let client;
  before(async () => {
    server = await startServer(['-b', 'graph', '--parallel', '1', '--api-key', key, '--max-body', String(maxBody)]);
    client = server.client({ apiKey: key });
  });
  after(() => server.stop());

  test('400: a field the server cannot honour, a bad value, a prompt longer than the context', async () => {
    const messages = [{ role: 'user', content: 'Hello' }];
    let e = await raised(client.chat.completions.create({ model: 'stories', messages, n: 2 }));
    assert.ok(e instanceof OpenAI.BadRequestError, e.constructor.name);
    assert.equal(e.status, 400);
    assert.equal(e.type, 'invalid_request_error');
    assert.match(e.message, /\bn\b/);

    e = await raised(
      client.chat.completions.create({
        model: 'stories',
        messages,
        tools: [{ type: 'function', function: { name: 'f', parameters: {} } }],
      }),
    );
    assert.ok(e instanceof OpenAI.BadRequestError);
    assert.equal(e.type, 'invalid_request_error');
    assert.match(e.message, /tools/);

    e = await raised(client.completions.create({ model: 'stories', prompt: 'Hi', temperature: 7 }));
    assert.ok(e instanceof OpenAI.BadRequestError);
    assert.match(e.message, /temperature/);

    // 300 tokens against the model's 256 positions (under --max-body as bytes).
    e = await raised(client.completions.create({ model: 'stories', prompt: Array(300).fill(5) }));
    assert.ok(e instanceof OpenAI.BadRequestError);
    assert.match(e.message, /300 tokens.*256/);
  });

  test('401: a missing or wrong key; /v1/models stays public', async () => {
    for (const apiKey of ['wrong-key', 'test-key-']) {
      const e = await raised(server.client({ apiKey }).completions.create({ model: 'stories', prompt: 'Hi', max_tokens: 2 }));
      assert.ok(e instanceof OpenAI.AuthenticationError, e.constructor.name);
      assert.equal(e.status, 401);
      assert.equal(e.type, 'authentication_error');
    }
    const models = await server.client({ apiKey: 'wrong-key' }).models.list();
    assert.deepEqual(
      models.data.map((m) => m.id),
      ['stories1M.bin'],
    );
    // With the key the request goes through.
    const ok = await client.completions.create({ model: 'stories', prompt: 'Hi', max_tokens: 2 });
    assert.equal(ok.usage.completion_tokens, 2);
  });

  test('404: an unknown route', async () => {
    const e = await raised(client.models.retrieve('stories1M.bin'));
    assert.ok(e instanceof OpenAI.NotFoundError, e.constructor.name);
    assert.equal(e.status, 404);
    assert.equal(e.type, 'not_found_error');
    const e2 = await raised(client.embeddings.create({ model: 'stories', input: 'Hi' }));
    assert.ok(e2 instanceof OpenAI.NotFoundError);
    assert.match(e2.message, /\/v1\/embeddings/);
  });

  test('413: a body over --max-body', async () => {
    const e = await raised(client.completions.create({ model: 'stories', prompt: 'a'.repeat(2 * maxBody) }));
    // The SDK has no class of its own for 413: the base APIError carries it.
    assert.ok(e instanceof OpenAI.APIError, e.constructor.name);
    assert.equal(e.constructor, OpenAI.APIError);
    assert.equal(e.status, 413);
    assert.equal(e.type, 'request_too_large');
    assert.match(e.message, new RegExp(`--max-body \\(${maxBody} bytes\\)`));
    // The server keeps serving.
    const ok = await client.completions.create({ model: 'stories', prompt: 'Hi', max_tokens: 3 });
    assert.equal(ok.usage.completion_tokens, 3);
  });
});
