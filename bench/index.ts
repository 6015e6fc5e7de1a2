// npm run bench: every benchmark, each printing its figures. SLIPWAY_BENCH=drain|cycle|bridge runs one.
const only = process.env.SLIPWAY_BENCH;
if (!only || only === 'drain') await import('./drain.js');
if (!only || only === 'cycle') await import('./cycle.js');
if (!only || only === 'bridge') await import('./bridge.js');
