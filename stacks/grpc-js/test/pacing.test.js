'use strict';
// lib/pacing.js reads at the instants kit/clients/pacing.py's ReadPacer does: CPython's
// random.Random(seed) and the same gap rules (values below printed by CPython 3.11).
const test = require('node:test');
const assert = require('node:assert');
const { PythonRandom, ReadPacer, pyRound } = require('../lib/pacing');

test("PythonRandom is CPython's random.Random", () => {
  const expected = {
    1: [0.13436424411240122, 0.8474337369372327, 0.763774618976614],
    2: [0.9560342718892494, 0.9478274870593494, 0.05655136772680869],
    7: [0.32383276483316237, 0.15084917392450192, 0.6509344730398537],
  };
  for (const [seed, values] of Object.entries(expected)) {
    const r = new PythonRandom(BigInt(seed));
    assert.deepStrictEqual([r.random(), r.random(), r.random()], values);
  }
  // a seed above 32 bits is taken word by word, as CPython's init_by_array does
  assert.strictEqual(new PythonRandom(12345678901234567890n).random(), 0.5120180983871961);
});

test("ReadPacer's due times are the kit's", () => {
  const p = new ReadPacer(1e6, 0n, 2n, 262144, 0.5);
  const due = [p.dueNs];
  for (let i = 0; i < 5; i += 1) {
    assert.strictEqual(p.take(p.dueNs - 1n, 262144), 0); // not due yet
    assert.strictEqual(p.take(p.dueNs, 262144), 262144);
    due.push(p.dueNs);
  }
  assert.deepStrictEqual(due, [381690648n, 761229937n, 907126539n, 1060447223n, 1410540241n, 1734542358n]);
  const late = new ReadPacer(1e6, 0n, 2n, 262144, 0.5);
  late.take(10n ** 10n, 262144); // woken late: it catches up by one gap at most
  assert.strictEqual(late.dueNs, 9737856000n);
});

test("pyRound rounds halves to even, as Python's round()", () => {
  assert.deepStrictEqual([0.5, 1.5, 2.5, 2.4, 2.6].map(pyRound), [0, 2, 2, 2, 3]);
});
