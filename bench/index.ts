// npm run bench: every benchmark, each printing its figures.
await import('./drain.js');
