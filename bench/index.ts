// npm run bench: every benchmark, each printing its figures. SLIPWAY_BENCH=drain|cycle runs one.
const only = process.env.SLIPWAY_BENCH;
if (!only || only === 'drain') await import('./drain.js');
if (!only || only === 'cycle') await import('./cycle.js');
