#!/usr/bin/env node
// The Cucumber Language Server that editor/node_modules holds (editor/package-lock.json pins
// it), started as its own bin starts it (`--stdio`), with one change: completion finds Japanese.
// The server searches its completions with js-search, whose tokenizer keeps only the letters
// [a-zа-яё0-9-'] and so never finds a phrase from Japanese text; here the tokenizer also keeps
// the words of every other script (split at spaces and punctuation). English words are
// tokenized as before. tests/editor.rs shows the upstream server completing no Japanese prefix
// and this one completing it.
'use strict'

const path = require('node:path')

const server = path.join(__dirname, 'node_modules', '@cucumber', 'language-server')
const service = require.resolve('@cucumber/language-service', { paths: [server] })
const { SimpleTokenizer } = require(require.resolve('js-search', { paths: [service] }))

const latin = SimpleTokenizer.prototype.tokenize
SimpleTokenizer.prototype.tokenize = function tokenize(text) {
  const others = text.split(/[^\p{L}\p{M}\p{N}]+/u).filter((word) => /[^\x00-\x7f]/.test(word))
  return latin.call(this, text).concat(others)
}

require(path.join(server, 'bin', 'cucumber-language-server.cjs'))
