"""cpucost's Python client: python3 requests_loop.py MODE N URL WARMUP LIMIT_S

Sends WARMUP requests to URL + "warm", then N requests to URL (stopping after
LIMIT_S seconds), and prints "attempts failed µs": the requests attempted, how many
failed, and the measured loop's wall time in microseconds. MODE:
  session        one requests.Session, connections kept alive and reused
  session-close  one Session, each request with "Connection: close"
  get            requests.get each time: a new Session (and so a new connection
                 pool and connection) per request (requests/api.py request)
"""
import sys
import time

import requests

mode, n, url, warm, limit = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
session = requests.Session()
headers = {"Connection": "close"} if mode == "session-close" else None


def get(u):
    if mode == "get":
        r = requests.get(u, timeout=5)
    else:
        r = session.get(u, headers=headers, timeout=5)
    return r.status_code == 200 and len(r.content) > 0


for _ in range(warm):
    get(url + "warm")
attempts = failed = 0
start = time.monotonic()
while attempts < n and time.monotonic() - start < limit:
    attempts += 1
    try:
        ok = get(url)
    except requests.RequestException:
        ok = False
    failed += not ok
print(attempts, failed, round((time.monotonic() - start) * 1e6))
