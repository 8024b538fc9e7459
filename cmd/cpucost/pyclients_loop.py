"""cpucost's httpx and aiohttp client: python3 pyclients_loop.py MODE N URL WARMUP LIMIT_S

Sends WARMUP requests to URL + "warm", then N requests to URL (stopping after
LIMIT_S seconds), one at a time, each answer read to its end, and prints
"attempts failed µs": the requests attempted, how many failed, and the measured
loop's wall time in microseconds. MODE:
  httpx          one httpx.Client, connections kept alive
  httpx-close    the same, to URL + "close": the server answers each with
                 Connection: close, so each request opens a connection
  aiohttp        one aiohttp.ClientSession, awaited one request at a time
  aiohttp-close  the same, to URL + "close"
"""
import asyncio
import sys
import time

mode, n, url, warm, limit = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
target = url + "close" if mode.endswith("-close") else url


def measured(get):
    attempts = failed = 0
    start = time.monotonic()
    while attempts < n and time.monotonic() - start < limit:
        attempts += 1
        failed += not get()
    return attempts, failed, round((time.monotonic() - start) * 1e6)


def with_httpx():
    import httpx

    with httpx.Client(timeout=5) as client:
        def get(u=target):
            try:
                r = client.get(u)
                return r.status_code == 200 and len(r.content) > 0
            except httpx.HTTPError:
                return False

        for _ in range(warm):
            get(url + "warm")
        return measured(get)


async def with_aiohttp():
    import aiohttp

    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as session:
        async def get(u=target):
            try:
                async with session.get(u) as r:
                    body = await r.read()
                    return r.status == 200 and len(body) > 0
            except (aiohttp.ClientError, asyncio.TimeoutError):
                return False

        for _ in range(warm):
            await get(url + "warm")
        attempts = failed = 0
        start = time.monotonic()
        while attempts < n and time.monotonic() - start < limit:
            attempts += 1
            failed += not await get()
        return attempts, failed, round((time.monotonic() - start) * 1e6)


if mode.startswith("httpx"):
    counts = with_httpx()
else:
    counts = asyncio.run(with_aiohttp())
print(*counts)
