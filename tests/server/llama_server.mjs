// The tests' side of llama-server and llama-cli: starts a server on a free port
// (`--port 0`, the port read from its first line of output) with stories1M and a
// Llama-2-shaped chat template, waits until it is loaded, and stops it in an `after`
// hook and on process exit, so nothing is left running even when a test fails; runs
// llama-cli with the same model for the answers to compare with.
// The binaries and the models come from tests/CMakeLists.txt (run-tests.sh):
// LLAMA_SERVER, LLAMA_CLI, LLAMA_MODELS_DIR.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import OpenAI from 'openai';

function requiredPath(variable) {
  const value = process.env[variable];
  if (!value) throw new Error(`${variable} is not set (run these tests through ctest -R openai)`);
  if (!existsSync(value)) throw new Error(`${variable}: ${value} does not exist`);
  return value;
}

export const serverPath = requiredPath('LLAMA_SERVER');
export const cliPath = requiredPath('LLAMA_CLI');
const modelsDir = requiredPath('LLAMA_MODELS_DIR');
const checkpoint = join(modelsDir, 'stories1M.bin');
const tokenizer = join(modelsDir, 'tok2048.bin');
for (const f of [checkpoint, tokenizer]) {
  if (!existsSync(f)) throw new Error(`test model ${f} is missing (see ../shared/models/README.md)`);
}

// stories1M has no chat template of its own: one in the shape of Llama 2's (the one
// tests/test_server.cpp uses), given to the server and to llama-cli alike.
const scratch = mkdtempSync(join(tmpdir(), 'llama-server-openai-'));
export const chatTemplate = join(scratch, 'chat.jinja');
writeFileSync(
  chatTemplate,
  "{% for m in messages %}{% if m['role'] == 'user' %}{{ bos_token }}[INST] " +
    "{{ m['content'] }} [/INST]{% elif m['role'] == 'system' %}<<SYS>>{{ m['content'] }}" +
    '<</SYS>>{% else %} {{ m[\'content\'] }}{{ eos_token }}{% endif %}{% endfor %}',
);

// The model flags both programs take; two threads whatever the machine.
export const modelArgs = ['-c', checkpoint, '-k', tokenizer, '-j', '2'];

// Bounds generous enough for a loaded machine and sanitizer builds; only a hang reaches them.
const startSeconds = 120;
const stopSeconds = 30;

const running = new Set();
after(async () => {
  await Promise.all([...running].map((s) => s.stop()));
  rmSync(scratch, { recursive: true, force: true });
});
process.on('exit', () => {
  for (const s of running) s.child.kill('SIGKILL');
});
// The runner cancelling this file (a timeout, ^C) must not orphan the servers either.
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => process.exit(1));

export class Server {
  constructor(child) {
    this.child = child;
    this.log = '';
    this.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  }

  // The SDK talking to this server; maxRetries 0 so an error is the server's answer.
  client(options = {}) {
    return new OpenAI({ baseURL: `${this.origin}/v1`, apiKey: 'none', maxRetries: 0, timeout: 120_000, ...options });
  }

  async getJson(path) {
    const res = await fetch(this.origin + path);
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  }

  async postJson(path, body) {
    const res = await fetch(this.origin + path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status !== 200) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  }

  // SIGTERM (the server drains, --drain-timeout 0), SIGKILL past stopSeconds.
  async stop() {
    if (!running.has(this)) return this.exited;
    running.delete(this);
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), stopSeconds * 1000);
    const result = await this.exited;
    clearTimeout(timer);
    return result;
  }
}

// Starts llama-server with the test model and `args` (backend, --parallel, ...) and
// resolves once it answers /health with 200.
export async function startServer(args = []) {
  const child = spawn(serverPath, [...modelArgs, '--chat-template', chatTemplate, '--port', '0', '--drain-timeout', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const server = new Server(child);
  running.add(server);
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => {
    server.log = (server.log + d).slice(-20000);
  });
  const lastLog = () => server.log.trim().split('\n').slice(-3).join(' | ');

  child.stdout.setEncoding('utf8');
  let stdout = '';
  const firstLine = new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`llama-server printed no port within ${startSeconds} s: ${lastLog()}`)),
      startSeconds * 1000,
    );
    child.stdout.on('data', (d) => {
      stdout += d;
      const end = stdout.indexOf('\n');
      if (end >= 0) {
        clearTimeout(timer);
        resolve(stdout.slice(0, end));
      }
    });
    child.on('error', (e) => reject(new Error(`llama-server could not start: ${e.message}`)));
    server.exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`llama-server exited (${code ?? signal}) before listening: ${lastLog()}`));
    });
  });
  try {
    const line = await firstLine;
    const m = /^llama-server: listening on (http:\/\/[^:]+:(\d+))$/.exec(line);
    if (!m || m[2] === '0') throw new Error(`llama-server's first line names no port: ${line}`);
    server.origin = m[1];
    const deadline = Date.now() + startSeconds * 1000;
    for (;;) {
      const res = await fetch(`${server.origin}/health`).catch(() => null);
      if (res?.status === 200) break;
      if (Date.now() > deadline) throw new Error(`llama-server not loaded within ${startSeconds} s: ${lastLog()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  } catch (e) {
    await server.stop();
    throw e;
  }
  return server;
}

// Runs llama-cli with the test model and `args` (add `--chat-template`, chatTemplate
// for -m chat), standard input empty; resolves to its standard output, rejects with
// its last error line on a non-zero exit.
export function runCli(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(cliPath, [...modelArgs, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0) resolve(out);
      else reject(new Error(`llama-cli ${args.join(' ')}: exit ${code ?? signal}: ${err.trim().split('\n').pop()}`));
    });
  });
}

// The text of a stream from the SDK (chat or completions), its chunks and finish_reason.
export async function collect(stream) {
  const chunks = [];
  let text = '';
  let finish = null;
  for await (const chunk of stream) {
    chunks.push(chunk);
    const choice = chunk.choices[0];
    if (!choice) continue;
    text += choice.delta?.content ?? choice.text ?? '';
    if (choice.finish_reason) finish = choice.finish_reason;
  }
  return { text, chunks, finish };
}

// Waits until every sequence of `server` is idle, or fails after `seconds`.
export async function waitIdle(server, seconds = 60) {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const slots = await server.getJson('/slots');
    if (slots.every((s) => !s.is_processing)) return slots;
    if (Date.now() > deadline) {
      throw new Error(`sequences still busy after ${seconds} s: ${JSON.stringify(slots)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
