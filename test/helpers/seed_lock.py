"""The seed article's lock, as a Python service writes it with redis-py: SET NX PX
to take it, a Lua compare-and-delete to release only our own token. Runs `count`
locks on keys `<prefix><i>` with hold times from a seeded distribution, and
prints what it measured itself (acquire returned -> release returned) as JSON.

argv: <port> <key prefix> <ttl ms> <count> <seed> [overrun key]
"""
import json
import random
import sys
import time
import uuid

import redis


class RedisLock:
    RELEASE = """
    if redis.call("get", KEYS[1]) == ARGV[1] then
        return redis.call("del", KEYS[1])
    else
        return 0
    end
    """

    def __init__(self, client, key, ttl_ms):
        self.client = client
        self.key = key
        self.ttl_ms = ttl_ms
        self.token = str(uuid.uuid4())
        self._release = client.register_script(self.RELEASE)

    def acquire(self, timeout=10.0, retry=0.01):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.client.set(self.key, self.token, nx=True, px=self.ttl_ms):
                return True
            time.sleep(retry)
        return False

    def release(self):
        return self._release(keys=[self.key], args=[self.token]) == 1


def main():
    port, prefix, ttl, count, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    overrun = sys.argv[6] if len(sys.argv) > 6 else None
    client = redis.Redis(port=int(port))
    rng = random.Random(seed)
    holds = []
    for i in range(count):
        lock = RedisLock(client, f"{prefix}{i}", ttl)
        if not lock.acquire():
            raise SystemExit(f"could not take {lock.key}")
        start = time.monotonic()
        time.sleep((2 + 50 * rng.random() ** 3) / 1000)
        if not lock.release():
            raise SystemExit(f"lost {lock.key}")
        holds.append((time.monotonic() - start) * 1000)
    released = None
    if overrun:
        time.sleep(0.3)  # the other workers have released some locks of the pattern by now
        lock = RedisLock(client, overrun, 100)
        lock.acquire()
        time.sleep(0.3)  # the section outlives its 100 ms TTL
        released = lock.release()
    print(json.dumps({"holds": holds, "overrunReleased": released}))


if __name__ == "__main__":
    main()
