// Replicas behind nginx (docs/deploy.md): three llama-server processes and Debian's
// nginx with deploy/nginx/llama-proxy.conf, loaded through the official OpenAI client.
// Every request completes and equals the same request sent to one replica directly;
// a replica killed mid-load ends its streams with an error at the client (never a
// hang) while new requests succeed and, restarted on its port, it serves again; a
// rolling restart with SIGTERM loses no request.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { Replica, Nginx, KEY, waitFor } from './replicas.mjs';

const replicas = [];
let nginx;
let client;  // through nginx

before(async () => {
  for (let i = 0; i < 3; ++i) replicas.push(await Replica.start());
  nginx = await Nginx.start(replicas.map((r) => r.port));
  client = new OpenAI({ baseURL: `${nginx.url}/v1`, apiKey: KEY, maxRetries: 0, timeout: 120_000 });
});

after(async () => {
  // nginx's own account of what went wrong, for a failed run's output.
  if (nginx) console.error(`nginx error log:\n${nginx.errors()}`);
  await nginx?.stop();
  await Promise.all(replicas.map((r) => r.kill()));
});

// Requests whose answers do not depend on timing: greedy or seeded, bounded length.
function request(i, extra = {}) {
  const prompts = ['Once upon a time', 'The little dog', 'Lily and Ben', 'One day, a big bird',
    'Tom had a red ball', 'The sun was hot'];
  return {
    model: 'stories', prompt: prompts[i % prompts.length], max_tokens: 24 + (i % 5) * 8,
    temperature: i % 3 === 0 ? 0 : 0.8, top_p: 0.9, seed: 100 + i, ...extra,
  };
}

async function complete(c, body) {
  if (!body.stream) return (await c.completions.create(body)).choices[0].text;
  let text = '';
  for await (const chunk of await c.completions.create(body)) text += chunk.choices[0]?.text ?? '';
  return text;
}

async function finishedBy(replica) {
  const res = await fetch(`${replica.url}/metrics`, { headers: { Authorization: `Bearer ${KEY}` } });
  const m = /^llama_backends_requests_finished_total (\S+)$/m.exec(await res.text());
  assert.ok(m, `replica on port ${replica.port}: no requests_finished_total in /metrics`);
  return Number(m[1]);
}

test('every request through nginx completes with the text one replica gives alone', async () => {
  const direct = new OpenAI({ baseURL: `${replicas[0].url}/v1`, apiKey: KEY, maxRetries: 0 });
  const bodies = Array.from({ length: 18 }, (_, i) => request(i, { stream: i % 2 === 0 }));
  const want = [];
  for (const b of bodies) want.push(await complete(direct, { ...b, stream: false }));
  const got = await Promise.all(bodies.map((b) => complete(client, b)));
  assert.deepEqual(got, want);
  // least_conn spread the concurrent requests: more than one replica served.
  const served = await Promise.all(replicas.map(finishedBy));
  assert.ok(served.filter((n) => n > 0).length >= 2, `requests finished per replica: ${served}`);
});

test('a stream flows through nginx token by token, not buffered to its end', async () => {
  const stream = await client.completions.create(
    request(0, { stream: true, max_tokens: 200, ignore_eos: true }));
  let chunks = 0;
  let busyAtFirst = -1;
  for await (const chunk of stream) {
    if (!chunk.choices[0]?.text) continue;
    // Paced at 10 ms a step, the stream has seconds to go: buffered by nginx, its
    // first text would arrive only once the replica had finished.
    if (++chunks === 1) busyAtFirst = (await Promise.all(replicas.map((r) => r.busySequences()))).reduce((a, b) => a + b);
  }
  assert.ok(busyAtFirst > 0, 'the first chunk reached the client only after generation ended');
  assert.ok(chunks > 100, `the stream came in ${chunks} chunks`);
});

test('a replica killed mid-load: its streams fail cleanly, the rest succeed, a restart rejoins', async () => {
  const victim = replicas[1];
  // Long streams, so some are in flight on the victim when it dies.
  const long = (i) => request(i, { stream: true, max_tokens: 4000, ignore_eos: true, temperature: 0.8 });
  const inFlight = Array.from({ length: 9 }, (_, i) => complete(client, long(i)).then(
    (text) => ({ ok: true, text }), (error) => ({ ok: false, error })));
  await waitFor(async () => (await victim.busySequences()) > 0, 'a stream running on the victim');
  victim.signal('SIGKILL');
  await victim.exited;
  // Every stream settles (the client's own timeout would fail it after 120 s: a hang).
  const settled = await Promise.all(inFlight);
  const failed = settled.filter((s) => !s.ok);
  assert.ok(failed.length >= 1, 'no stream failed although one ran on the killed replica');
  for (const f of failed) {
    if (process.env.LLAMA_TEST_VERBOSE) console.log(`failed stream: ${f.error?.constructor?.name}: ${f.error}`);
    assert.ok(f.error instanceof Error, `a failed stream rejected with ${f.error}`);
    assert.ok(!(f.error instanceof OpenAI.APIConnectionTimeoutError), `a stream hung: ${f.error}`);
  }
  // New requests succeed on the others while the victim is down.
  const during = await Promise.all(Array.from({ length: 9 }, (_, i) => complete(client, request(i))));
  assert.equal(during.length, 9);
  // Restarted on its port, it serves again with no change to nginx's config.
  replicas[1] = await Replica.start(victim.port);
  await waitFor(async () => {
    await Promise.all(Array.from({ length: 6 }, (_, i) => complete(client, request(i))));
    return (await finishedBy(replicas[1])) > 0;
  }, 'the restarted replica to serve a request through nginx', 60_000);
});

// One at a time means the next replica is drained only once the restarted one is back
// in nginx's rotation: nginx (no active health checks) counts the drained replica's 503s
// as failures and sends it nothing until fail_timeout has passed, so stopping the next
// replica as soon as the restarted one is up can leave a single replica, or none, live.
test('a rolling restart with SIGTERM loses no request', async () => {
  let stop = false;
  const failures = [];
  let completed = 0;
  const worker = async (w) => {
    for (let i = w; !stop; i += 4) {
      try {
        await complete(client, request(i, { stream: i % 2 === 0 }));
        ++completed;
      } catch (error) {
        failures.push(String(error));
      }
    }
  };
  const load = Array.from({ length: 4 }, (_, w) => worker(w));
  for (let i = 0; i < replicas.length; ++i) {
    const before = completed;
    await waitFor(async () => completed >= before + 4, 'requests completing before the restart');
    const old = replicas[i];
    old.signal('SIGTERM');
    assert.equal(await old.exited, 0, `replica on port ${old.port} exit code after SIGTERM`);
    replicas[i] = await Replica.start(old.port);
    await waitFor(async () => (await finishedBy(replicas[i])) > 0,
      `the restarted replica on port ${old.port} to serve a request through nginx`, 60_000);
  }
  const before = completed;
  await waitFor(async () => completed >= before + 4, 'requests completing after the restarts');
  stop = true;
  await Promise.all(load);
  assert.deepEqual(failures, []);
});
