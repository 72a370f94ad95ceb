// llama-server's chat page in Debian's chromium, headless, driven by puppeteer-core:
// it loads and names the model, streams the API's reply, stops a reply mid-way and the
// server frees the sequence, shows HTML from the model or the user as text, and asks
// for the API key when the server wants one. A screenshot goes to LLAMA_ARTIFACTS_DIR.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';

import { chat, env, metric, slotsIdle, startServer, waitFor } from './server.js';

const TIMEOUT = { timeout: 120000 };
const KEY = 'browser-test-key';
let browser;
let server;
let keyed;

before(async () => {
  [server, keyed] = await Promise.all([startServer('open'), startServer('keyed', ['--api-key', KEY])]);
  browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    // Chromium refuses to start its sandbox as root (CI containers run as root); the
    // page under test is our own, on loopback, so running unsandboxed there is safe.
    args: process.getuid() === 0 ? ['--no-sandbox'] : [],
  });
});

after(async () => {
  await browser?.close();
  await Promise.all([server?.stop(), keyed?.stop()]);
});

// A fresh page on `url` that records script errors and CSP violations, which every test
// expects none of.
async function openPage(url) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1000, height: 700 });
  page.problems = [];
  page.on('pageerror', (e) => page.problems.push('page error: ' + e.message));
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/.test(m.text())) page.problems.push(m.text());
  });
  const res = await page.goto(url);
  assert.equal(res.status(), 200);
  return { page, res };
}

async function setSettings(page, { temperature = '', seed = '', maxTokens = '' }) {
  await page.evaluate((t, s, m) => {
    document.getElementById('temperature').value = t;
    document.getElementById('seed').value = s;
    document.getElementById('max-tokens').value = m;
  }, String(temperature), String(seed), String(maxTokens));
}

async function send(page, text) {
  await page.type('#input', text);
  await page.click('#send');
}

// The nth assistant message once it has ended: its text and how it ended.
async function reply(page, n) {
  await page.waitForFunction(
    (n) => document.querySelectorAll('.message.assistant')[n]?.dataset.state !== undefined,
    {}, n);
  return page.evaluate((n) => {
    const box = document.querySelectorAll('.message.assistant')[n];
    return { text: box.querySelector('.text').textContent, state: box.dataset.state,
             note: box.querySelector('.note').textContent };
  }, n);
}

describe('chat page', () => {
  test('loads with its headers and shows the model name', TIMEOUT, async () => {
    const { page, res } = await openPage(server.url);
    const headers = res.headers();
    assert.equal(headers['content-type'], 'text/html; charset=utf-8');
    const csp = headers['content-security-policy'];
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'sha256-[A-Za-z0-9+/]{43}='/);
    assert.match(csp, /style-src 'sha256-[A-Za-z0-9+/]{43}='/);
    assert.match(csp, /connect-src 'self'/);
    assert.doesNotMatch(csp, /unsafe/);
    await page.waitForFunction(() => document.getElementById('model').textContent === 'stories1M.bin');
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  test('streams a reply equal to the API\'s for the same seed', TIMEOUT, async () => {
    const { page } = await openPage(server.url);
    await setSettings(page, { temperature: 0.8, seed: 1234, maxTokens: 60 });
    const question = 'Tell me a story about a cat.';
    await send(page, question);
    const got = await reply(page, 0);
    assert.equal(got.state, 'done');
    const api = await chat(server, {
      messages: [{ role: 'user', content: question }], temperature: 0.8, seed: 1234, max_tokens: 60,
    });
    assert.ok(api.choices[0].message.content.length > 0);
    assert.equal(got.text, api.choices[0].message.content);
    const stats = await page.$eval('#stats', (e) => e.textContent);
    assert.match(stats, new RegExp(`^${api.usage.completion_tokens} tokens, [0-9.]+ tokens/s$`));

    // A second turn: the conversation goes back whole, as the API would get it.
    const follow = 'And then?';
    await send(page, follow);
    const second = await reply(page, 1);
    const api2 = await chat(server, {
      messages: [{ role: 'user', content: question }, { role: 'assistant', content: got.text },
                 { role: 'user', content: follow }],
      temperature: 0.8, seed: 1234, max_tokens: 60,
    });
    assert.equal(second.text, api2.choices[0].message.content);
    mkdirSync(env.artifacts, { recursive: true });
    await page.screenshot({ path: join(env.artifacts, 'chat-page.png') });
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  test('stop cancels the reply mid-way and frees the sequence', TIMEOUT, async () => {
    const { page } = await openPage(server.url);
    await setSettings(page, { temperature: 0, maxTokens: 200 });
    const cancelled = await metric(server, 'llama_backends_requests_cancelled_total');
    const finished = await metric(server, 'llama_backends_requests_finished_total');
    // Hold the backend after 4 more forward calls: the reply has begun and cannot end
    // until the test lets it.
    const held = server.calls() + 4;
    server.setGate(held);
    const question = 'Once upon a time';
    await send(page, question);
    await waitFor(() => server.calls() === held, 'the backend to reach the gate');
    await page.waitForFunction(
      () => document.querySelector('.message.assistant .text')?.textContent.length > 0);
    assert.equal(await slotsIdle(server), false);
    await page.click('#stop');
    const got = await reply(page, 0);
    assert.equal(got.state, 'stopped');
    assert.equal(got.note, 'stopped');
    // The server notices the closed connection at its next write and cancels; the
    // backend is let through one call at a time until the sequence is free.
    for (let step = 0; !(await slotsIdle(server)); ++step) {
      assert.ok(step < 64, 'the sequence is still busy 64 steps after stop');
      const calls = server.calls();
      server.setGate(calls + 1);
      await waitFor(async () => server.calls() > calls || (await slotsIdle(server)),
                    'a step or the sequence freed');
    }
    server.setGate(null);
    await waitFor(async () => (await metric(server, 'llama_backends_requests_cancelled_total')) ===
                      cancelled + 1, 'the request counted as cancelled');
    assert.equal(await metric(server, 'llama_backends_requests_finished_total'), finished);
    // What was shown is the start of the whole reply, and only its start.
    const full = await chat(server, {
      messages: [{ role: 'user', content: question }], temperature: 0, max_tokens: 200,
    });
    const whole = full.choices[0].message.content;
    assert.ok(whole.startsWith(got.text), `"${got.text}" does not begin "${whole}"`);
    assert.ok(got.text.length < whole.length);
    assert.equal(await page.$eval('#send', (b) => b.disabled), false);
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  test('HTML in a reply or a message is shown as text, never run', TIMEOUT, async () => {
    const { page } = await openPage(server.url);
    const evil = '<img src=x onerror="window.__pwned=1">';
    await page.setRequestInterception(true);
    page.on('request', (request) => {
      if (!request.url().endsWith('/v1/chat/completions')) return request.continue();
      const chunk = (delta, finish = null) => 'data: ' + JSON.stringify({
        id: 'chatcmpl-x', object: 'chat.completion.chunk', created: 0, model: 'm',
        choices: [{ index: 0, delta, finish_reason: finish }],
      }) + '\n\n';
      // The markup split across two events, as a model's tokens would split it.
      return request.respond({
        status: 200,
        contentType: 'text/event-stream',
        body: chunk({ role: 'assistant', content: '' }) + chunk({ content: evil.slice(0, 9) }) +
              chunk({ content: evil.slice(9) }) + chunk({}, 'stop') + 'data: [DONE]\n\n',
      });
    });
    const userText = '<b>bold</b><img src=y onerror="window.__pwned=2"><script>window.__pwned=3</script>';
    await send(page, userText);
    const got = await reply(page, 0);
    assert.equal(got.text, evil);
    const user = await page.$eval('.message.user .text', (e) => e.textContent);
    assert.equal(user, userText);
    assert.equal(await page.$$eval('#messages img, #messages b, #messages script', (l) => l.length), 0);
    assert.equal(await page.evaluate(() => typeof window.__pwned), 'undefined');
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  test('asks for the API key when the server wants one, then works', TIMEOUT, async () => {
    const { page } = await openPage(keyed.url);
    // The page and /v1/models need no key.
    await page.waitForFunction(() => document.getElementById('model').textContent === 'stories1M.bin');
    await setSettings(page, { temperature: 0, maxTokens: 30 });
    const question = 'Hello there';
    await send(page, question);
    await page.waitForSelector('#key-form:not([hidden])');
    // A wrong key is refused and the form comes back.
    await page.type('#key-input', 'wrong-key');
    const refused = page.waitForResponse(
      (r) => r.url().endsWith('/v1/chat/completions') && r.status() === 401);
    await page.click('#key-form button');
    await refused;
    await page.waitForSelector('#key-form:not([hidden])');
    assert.match(await page.$eval('#status', (e) => e.textContent), /API key/);
    await page.type('#key-input', KEY);
    await page.click('#key-form button');
    const got = await reply(page, 0);
    assert.equal(got.state, 'done');
    const api = await chat(keyed, {
      messages: [{ role: 'user', content: question }], temperature: 0, max_tokens: 30,
    }, KEY);
    assert.equal(got.text, api.choices[0].message.content);
    assert.equal(await page.evaluate(() => sessionStorage.getItem('llama-server-api-key')), KEY);
    assert.equal(await page.$$eval('.message.user', (l) => l.length), 1);
    assert.deepEqual(page.problems, []);
    await page.close();
  });
});
