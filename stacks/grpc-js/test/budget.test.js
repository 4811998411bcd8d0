'use strict';
// The server's download budget and shared messages (lib/budget.js), as pure units.
const test = require('node:test');
const assert = require('node:assert');
const { DownloadBudget, MessageCache } = require('../lib/budget');

const MIB = 2 ** 20;

test('a call is charged its message, twice above the shared size', () => {
  const budget = new DownloadBudget(256 * MIB, 16 * MIB);
  assert.strictEqual(budget.charge(MIB), MIB);
  assert.strictEqual(budget.charge(16 * MIB), 16 * MIB);
  assert.strictEqual(budget.charge(16 * MIB + 1), 2 * (16 * MIB + 1));
});

test("40 calls of 64 MiB: two fit, 38 are refused, and the charges come back once", () => {
  const budget = new DownloadBudget(256 * MIB, 16 * MIB);
  const releases = [];
  for (let i = 0; i < 40; i += 1) releases.push(budget.take(64 * MIB));
  assert.strictEqual(releases.filter((r) => r !== null).length, 2);
  assert.strictEqual(budget.refused, 38);
  assert.strictEqual(budget.held, 256 * MIB);
  releases[0]();
  releases[0](); // however often a call's end is reported, its charge goes back once
  assert.strictEqual(budget.held, 128 * MIB);
  assert.notStrictEqual(budget.take(64 * MIB), null);
  assert.strictEqual(budget.take(1), null);
  assert.strictEqual(budget.refused, 39);
});

test('2,000 calls of 1 MiB: 256 held at once', () => {
  const budget = new DownloadBudget(256 * MIB, 16 * MIB);
  const taken = [];
  for (let i = 0; i < 2000; i += 1) taken.push(budget.take(MIB));
  assert.strictEqual(taken.filter((r) => r !== null).length, 256);
  assert.strictEqual(budget.refused, 2000 - 256);
  for (const release of taken) if (release) release();
  assert.strictEqual(budget.held, 0);
});

test('messages are built once per size, least recently used out, large ones never kept', () => {
  const built = [];
  const cache = new MessageCache(3 * MIB, MIB, (size) => {
    built.push(size);
    return Buffer.alloc(size);
  });
  const one = cache.get(MIB);
  assert.strictEqual(cache.get(MIB), one);
  cache.get(MIB - 1);
  cache.get(MIB - 2);
  cache.get(MIB); // now the most recent
  cache.get(MIB - 3); // over 3 MiB: the least recently used (MIB - 1) goes
  assert.deepStrictEqual([...cache.messages.keys()], [MIB - 2, MIB, MIB - 3]);
  cache.get(MIB + 1);
  cache.get(MIB + 1);
  assert.deepStrictEqual(built, [MIB, MIB - 1, MIB - 2, MIB - 3, MIB + 1, MIB + 1]);
  assert.ok(cache.bytes <= 3 * MIB);
});
