// cpucost's Node.js client: node node_loop.js MODE N URL WARMUP LIMIT_S
//
// Sends WARMUP requests to URL + "warm", then N requests to URL (stopping after
// LIMIT_S seconds), one at a time, each answer read to its end, and prints
// "attempts failed µs": the requests attempted, how many failed, and the measured
// loop's wall time in microseconds. MODE:
//   fetch        global fetch (undici's global Agent), connections kept alive
//   fetch-close  global fetch to URL + "close": the server answers each with
//                Connection: close, so each request opens a connection
//   http         http.get with the globalAgent (keep-alive since Node 19)
//   http-close   http.get to URL + "close"
"use strict";
const http = require("node:http");

const [mode, n, url, warm, limit] = [process.argv[2], +process.argv[3], process.argv[4], +process.argv[5], +process.argv[6]];
const closing = mode.endsWith("-close");

function viaHTTP(u) {
  return new Promise((resolve) => {
    const req = http.get(u, { timeout: 5000 }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode === 200));
      res.on("error", () => resolve(false));
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(false));
  });
}

async function viaFetch(u) {
  try {
    const res = await fetch(u, { signal: AbortSignal.timeout(5000) });
    const body = await res.arrayBuffer();
    return res.status === 200 && body.byteLength > 0;
  } catch {
    return false;
  }
}

const get = mode.startsWith("fetch") ? viaFetch : viaHTTP;

(async () => {
  for (let i = 0; i < warm; i++) await get(url + "warm");
  const target = closing ? url + "close" : url;
  let attempts = 0, failed = 0;
  const start = process.hrtime.bigint();
  const end = start + BigInt(Math.round(limit * 1e9));
  while (attempts < n && process.hrtime.bigint() < end) {
    attempts++;
    if (!(await get(target))) failed++;
  }
  const us = Number((process.hrtime.bigint() - start) / 1000n);
  console.log(attempts, failed, us);
})();
