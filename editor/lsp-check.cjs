#!/usr/bin/env node
// Runs the Cucumber Language Server (the one editors run) over the repository as an editor does,
// and prints what it answered as one JSON document on stdout, for tests/editor.rs to judge.
//
//   node editor/lsp-check.cjs ROOT PREFIXES_JSON [upstream]
//
// The server is editor/cucumber-language-server.cjs (what editors are told to run), or with
// `upstream` the package's own bin, unchanged.
// ROOT is the repository (the server's workspace and working directory); the server's settings
// are the `cucumber.*` keys of ROOT/.vscode/settings.json, answered to its
// workspace/configuration request. Every feature the settings' `features` globs find is opened
// and its published diagnostics collected. PREFIXES_JSON is a list of
// {"name", "language", "keyword", "text"}: for each, a scratch feature in that Gherkin language
// whose last step is `keyword text` is opened and completion asked for at its end.
//
// Output: {"server", "log", "features": [{"path", "diagnostics": [{"line", "code", "message"}]}],
//          "completions": {name: [label, ...]}, "ms": {"index", "features", "completions"}}.
'use strict'

const { spawn } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const url = require('node:url')

const [root, prefixesJson, which] = process.argv.slice(2)
if (!root || !prefixesJson) {
  console.error('usage: lsp-check.cjs ROOT PREFIXES_JSON [upstream]')
  process.exit(2)
}
const prefixes = JSON.parse(prefixesJson)
const settingsFile = path.join(root, '.vscode', 'settings.json')
const vscode = JSON.parse(fs.readFileSync(settingsFile, 'utf8'))
const settings = {}
for (const [key, value] of Object.entries(vscode)) {
  if (key.startsWith('cucumber.')) settings[key.slice('cucumber.'.length)] = value
}
const timeoutMs = Number(process.env.LSP_CHECK_TIMEOUT_MS || 60000)

const bin =
  which === 'upstream'
    ? path.join(__dirname, 'node_modules', '.bin', 'cucumber-language-server')
    : path.join(__dirname, 'cucumber-language-server.cjs')
// The server finds files relative to its working directory: an editor starts it at the root.
const server = spawn(process.execPath, [bin, '--stdio'], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] })
let serverStderr = ''
server.stderr.on('data', (d) => (serverStderr += d))

const fail = (message) => {
  console.error(`lsp-check: ${message}`)
  const brief = (text) => text.split('\n').filter((l) => !/^\s+at /.test(l)).slice(0, 60).join('\n')
  if (serverStderr) console.error(`server stderr:\n${brief(serverStderr)}`)
  if (log.length) console.error(`server log:\n${brief(log.join('\n'))}`)
  server.kill()
  process.exit(1)
}
const timer = setTimeout(() => fail(`no answer within ${timeoutMs} ms`), timeoutMs)
server.on('exit', (code, signal) => {
  if (!finished) fail(`the server exited (${code ?? signal}) before the check finished`)
})

// --- JSON-RPC over stdio, framed with Content-Length (the LSP base protocol) ---
let buffer = Buffer.alloc(0)
let nextId = 1
const pending = new Map()
const log = []
const diagnostics = new Map()
const waiters = []
let finished = false

function send(message) {
  const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...message }), 'utf8')
  server.stdin.write(`Content-Length: ${body.length}\r\n\r\n`)
  server.stdin.write(body)
}
function request(method, params) {
  const id = nextId++
  send({ id, method, params })
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject, method }))
}
const notify = (method, params) => send({ method, params })
// Resolves when `test` holds, checked after every message from the server.
function until(test) {
  return new Promise((resolve) => {
    if (test()) resolve()
    else waiters.push({ test, resolve })
  })
}

server.stdout.on('data', (chunk) => {
  buffer = Buffer.concat([buffer, chunk])
  for (;;) {
    const headerEnd = buffer.indexOf('\r\n\r\n')
    if (headerEnd < 0) return
    const header = buffer.subarray(0, headerEnd).toString('ascii')
    const length = Number(/Content-Length: (\d+)/i.exec(header)?.[1])
    if (!Number.isFinite(length)) fail(`bad header from the server: ${header}`)
    if (buffer.length < headerEnd + 4 + length) return
    const body = buffer.subarray(headerEnd + 4, headerEnd + 4 + length).toString('utf8')
    buffer = buffer.subarray(headerEnd + 4 + length)
    receive(JSON.parse(body))
    for (let i = waiters.length - 1; i >= 0; i--) {
      if (waiters[i].test()) waiters.splice(i, 1)[0].resolve()
    }
  }
})

function receive(message) {
  if (message.id !== undefined && message.method === undefined) {
    const call = pending.get(message.id)
    pending.delete(message.id)
    if (!call) return
    if (message.error) call.reject(new Error(`${call.method}: ${message.error.message}`))
    else call.resolve(message.result)
    return
  }
  switch (message.method) {
    case 'workspace/configuration':
      // One item per section asked: the server asks for `cucumber`.
      send({ id: message.id, result: message.params.items.map(() => settings) })
      break
    case 'window/logMessage':
      log.push(message.params.message)
      break
    case 'textDocument/publishDiagnostics':
      diagnostics.set(message.params.uri, message.params.diagnostics)
      break
    default:
      // client/registerCapability, workspace/semanticTokens/refresh and the like: accepted.
      if (message.id !== undefined) send({ id: message.id, result: null })
  }
}

const rootUri = url.pathToFileURL(path.resolve(root)).href
const uriOf = (file) => url.pathToFileURL(path.resolve(root, file)).href
const elapsed = (since) => Math.round(Number(process.hrtime.bigint() - since) / 1e6)

async function main() {
  const started = process.hrtime.bigint()
  const init = await request('initialize', {
    processId: process.pid,
    rootUri,
    clientInfo: { name: 'labcheck lsp-check' },
    capabilities: {
      workspace: { configuration: true },
      textDocument: { completion: { completionItem: { snippetSupport: true } } },
    },
  })
  notify('initialized', {})
  // The server indexes the glue and the features once initialized; it says so in its log.
  await until(() => log.some((l) => l.startsWith('* Built ')))
  const indexMs = elapsed(started)

  const featuresStarted = process.hrtime.bigint()
  // The server's own globber, as it finds the features.
  const fg = require(require.resolve('fast-glob', { paths: [path.join(__dirname, 'node_modules', '@cucumber', 'language-server')] }))
  const files = [...new Set(settings.features.flatMap((glob) => fg.sync(glob, { cwd: root, onlyFiles: true })))]
    .filter((f) => f.endsWith('.feature'))
    .sort()
  for (const file of files) {
    notify('textDocument/didOpen', {
      textDocument: { uri: uriOf(file), languageId: 'cucumber', version: 1, text: fs.readFileSync(path.join(root, file), 'utf8') },
    })
  }
  await until(() => files.every((f) => diagnostics.has(uriOf(f))))
  const featuresMs = elapsed(featuresStarted)

  const completionsStarted = process.hrtime.bigint()
  const completions = {}
  for (const p of prefixes) {
    const uri = uriOf(`editor/completion-${p.name}.feature`)
    const lines = [
      `# language: ${p.language}`,
      `${p.feature}: completion`,
      `  ${p.scenario}: completion`,
      `    ${p.keyword}${p.text}`,
    ]
    notify('textDocument/didOpen', { textDocument: { uri, languageId: 'cucumber', version: 1, text: lines.join('\n') } })
    const last = lines.length - 1
    const items = await request('textDocument/completion', {
      textDocument: { uri },
      position: { line: last, character: lines[last].length },
    })
    completions[p.name] = (Array.isArray(items) ? items : items?.items ?? []).map((i) => i.label)
  }
  const completionsMs = elapsed(completionsStarted)

  finished = true
  await request('shutdown', null)
  notify('exit', null)
  clearTimeout(timer)
  process.stdout.write(
    JSON.stringify({
      server: init.serverInfo,
      log,
      features: files.map((file) => ({
        path: file,
        diagnostics: diagnostics.get(uriOf(file)).map((d) => ({
          line: d.range.start.line + 1,
          code: d.code ?? null,
          message: d.message,
        })),
      })),
      completions,
      ms: { index: indexMs, features: featuresMs, completions: completionsMs },
    }) + '\n',
  )
}

main().catch((err) => fail(err.stack || String(err)))
