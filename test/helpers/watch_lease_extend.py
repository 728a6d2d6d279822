"""redis-py's own Lock, kept alive by a renewal thread calling Lock.extend() (a Lua
script whose PEXPIRE adds to the TTL left), as a Python service writes a lease.
Takes `count` locks on keys `<prefix><i>` in turn, each with a `ttl ms` timeout:
holds it `hold ms` while the thread extends it by `every ms` every `every ms`,
then releases it. With a last argument `overrun`, the last lock's thread stops
after its first renewal (the process stalled) and the lock expires while held.

Prints, as JSON, the gaps it measured itself between its acquire and each renewal
that succeeded (sent to sent, monotonic ms) and the releases that found the lock gone.

argv: <port> <key prefix> <ttl ms> <count> <hold ms> <every ms> [overrun]
"""
import json
import sys
import threading
import time

import redis
from redis.exceptions import LockError


def hold(client, key, ttl, hold_ms, every, renewals_wanted):
    # thread_local=False: the token must be seen by the renewal thread (redis-py keeps it per thread by default).
    lock = client.lock(key, timeout=ttl / 1000, blocking_timeout=10, thread_local=False)
    last = time.monotonic()  # sent, as the renewals' times are (the key is free: one SET NX PX)
    if not lock.acquire():
        raise SystemExit(f"could not take {key}")
    gaps = []
    stop = threading.Event()

    def renew():
        nonlocal last
        while not stop.wait(every / 1000) and (renewals_wanted is None or len(gaps) < renewals_wanted):
            sent = time.monotonic()
            if lock.extend(every / 1000):
                gaps.append((sent - last) * 1000)
                last = sent

    thread = threading.Thread(target=renew)
    thread.start()
    time.sleep(hold_ms / 1000)
    stop.set()
    thread.join()
    try:
        lock.release()
        return gaps, False
    except LockError:
        return gaps, True


def main():
    port, prefix, ttl, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    hold_ms, every = float(sys.argv[5]), float(sys.argv[6])
    overrun = len(sys.argv) > 7 and sys.argv[7] == "overrun"
    client = redis.Redis(port=int(port))
    holds = []
    gone = 0
    for i in range(count):
        last = overrun and i == count - 1
        gaps, lost = hold(client, f"{prefix}{i}", ttl, hold_ms + (2 * ttl if last else 0), every, 1 if last else None)
        holds.append(gaps)
        gone += lost
    print(json.dumps({"gaps": holds, "gone": gone}))


if __name__ == "__main__":
    main()
