"""The seed article's lock (see seed_lock.py), with sections that outlive its TTL:
`count` locks on keys `<prefix><start + i>`, each held for a time drawn uniformly
from [min ms, max ms]. Releases report whether the lock was still ours. Prints
the holds it measured itself and the releases that found the lock gone, as JSON.

argv: <port> <key prefix> <ttl ms> <count> <min ms> <max ms> <seed> <start>
"""
import json
import random
import sys
import time

import redis

from seed_lock import RedisLock


def main():
    port, prefix, ttl, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    low, high, seed, start = float(sys.argv[5]), float(sys.argv[6]), int(sys.argv[7]), int(sys.argv[8])
    client = redis.Redis(port=int(port))
    rng = random.Random(seed)
    holds = []
    gone = 0
    for i in range(count):
        lock = RedisLock(client, f"{prefix}{start + i}", ttl)
        if not lock.acquire():
            raise SystemExit(f"could not take {lock.key}")
        began = time.monotonic()
        time.sleep((low + (high - low) * rng.random()) / 1000)
        if not lock.release():
            gone += 1
        holds.append((time.monotonic() - began) * 1000)
    print(json.dumps({"holds": holds, "gone": gone}))


if __name__ == "__main__":
    main()
