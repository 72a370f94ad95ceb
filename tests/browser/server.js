// Starts and stops llama-server processes for the browser tests: each on 127.0.0.1
// with --port 0 (the port read from its first line of output) on stories1M with a
// Llama-2-shaped chat template, and every one stopped when the tests end.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const env = {
  server: process.env.LLAMA_SERVER,
  models: process.env.LLAMA_MODELS_DIR,
  gatePlugin: process.env.LLAMA_GATE_PLUGIN,
  artifacts: process.env.LLAMA_ARTIFACTS_DIR,
};

export const workDir = mkdtempSync(join(tmpdir(), 'llama-browser-'));

// The same template as tests/test_server.cpp's: stories1M has none of its own.
const TEMPLATE =
  "{% for m in messages %}{% if m['role'] == 'user' %}{{ bos_token }}[INST] " +
  "{{ m['content'] }} [/INST]{% elif m['role'] == 'system' %}<<SYS>>{{ m['content'] }}" +
  "<</SYS>>{% else %} {{ m['content'] }}{{ eos_token }}{% endif %}{% endfor %}";

const running = new Set();
process.on('exit', () => {
  for (const p of running) p.kill('SIGKILL');
  rmSync(workDir, { recursive: true, force: true });
});

// A server with the test-gate-file wrapper (open until the test writes the gate file)
// and `extra` flags. Resolves once it listens and /health says ok.
export async function startServer(name, extra = []) {
  const template = join(workDir, 'chat.jinja');
  writeFileSync(template, TEMPLATE);
  const gate = join(workDir, name + '.gate');
  const args = [
    '-c', join(env.models, 'stories1M.bin'), '-k', join(env.models, 'tok2048.bin'),
    '--chat-template', template, '--plugin', env.gatePlugin, '-b', 'test-gate-file:graph',
    '-j', '1', '--parallel', '2', '--port', '0', '--timeout', '30', '--drain-timeout', '0',
    ...extra,
  ];
  const proc = spawn(env.server, args, {
    env: { ...process.env, LLAMA_TEST_GATE: gate },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(proc);
  let log = '';
  proc.stderr.on('data', (d) => { log = (log + d).slice(-4000); });
  const exited = new Promise((resolve) => proc.on('exit', (code, signal) => {
    running.delete(proc);
    resolve({ code, signal });
  }));
  const firstLine = await new Promise((resolve, reject) => {
    const lines = createInterface({ input: proc.stdout });
    lines.once('line', resolve);
    exited.then(({ code }) => reject(new Error(`llama-server exited (${code}) before listening: ${log}`)));
  });
  const match = /listening on (http:\/\/[^\s]+)/.exec(firstLine);
  if (!match) throw new Error('llama-server: unexpected first line: ' + firstLine);
  const url = match[1] + '/';
  await waitFor(async () => (await fetch(url + 'health')).status === 200, 'the server to load');
  return {
    url,
    gate,
    log: () => log,
    // Forward calls the backend has run so far (the wrapper's count).
    calls() {
      return existsSync(gate + '.calls') ? Number(readFileSync(gate + '.calls', 'utf8')) : 0;
    },
    // Let the backend run until `n` forward calls in all, or without limit (null).
    setGate(n) {
      if (n === null) {
        rmSync(gate, { force: true });
      } else {
        writeFileSync(gate + '.tmp', String(n));
        renameSync(gate + '.tmp', gate);
      }
    },
    async stop() {
      rmSync(gate, { force: true });
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      const { code, signal } = await exited;
      if (code !== 0) throw new Error(`llama-server exited with ${code ?? signal}: ${log}`);
    },
  };
}

// Polls `check` every 20 ms until it is true; fails after 20 s, naming what it waited for
// (a bound against hangs, not a timing assumption: every wait here ends far sooner).
export async function waitFor(check, what, limitMs = 20000) {
  const end = Date.now() + limitMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not ready yet (a connection refused while starting)
    }
    if (Date.now() > end) throw new Error('timed out waiting for ' + what);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// A non-streamed chat completion straight from the API.
export async function chat(server, body, key) {
  const headers = { 'Content-Type': 'application/json' };
  if (key) headers.Authorization = 'Bearer ' + key;
  const res = await fetch(server.url + 'v1/chat/completions', {
    method: 'POST', headers, body: JSON.stringify(body),
  });
  const json = await res.json();
  if (res.status !== 200) throw new Error('chat completion failed: ' + JSON.stringify(json));
  return json;
}

export async function slotsIdle(server) {
  const slots = await (await fetch(server.url + 'slots')).json();
  return slots.every((s) => !s.is_processing);
}

// One counter or gauge from /metrics.
export async function metric(server, name) {
  const text = await (await fetch(server.url + 'metrics')).text();
  const line = text.split('\n').find((l) => l.startsWith(name + ' '));
  if (!line) throw new Error('no metric ' + name);
  return Number(line.split(' ')[1]);
}
