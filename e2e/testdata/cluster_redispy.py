"""Mixed workload for redis-py's RedisCluster, run by e2e/cluster_test.go.

usage: /usr/bin/python3 cluster_redispy.py N host:port [host:port ...]

Runs N operations (SET, GET, INCR, HSET/HGET, LPUSH/LRANGE, MSET/MGET with
hash tags) over keys spread across the slot space, checks every reply
against a model, then reads every key back. Prints "ok: ..." and exits 0,
or prints the first mismatch and exits 1.
"""
import random
import sys

from redis.cluster import ClusterNode, RedisCluster


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    n = int(sys.argv[1])
    nodes = []
    for addr in sys.argv[2:]:
        host, port = addr.rsplit(":", 1)
        nodes.append(ClusterNode(host, int(port)))
    rc = RedisCluster(startup_nodes=nodes, decode_responses=True,
                      socket_timeout=10, socket_connect_timeout=5)
    rc.flushall(target_nodes=RedisCluster.PRIMARIES)

    rnd = random.Random(7)
    strs, counters, hashes, lists = {}, {}, {}, {}
    ops = 0
    for i in range(n):
        op = i % 6
        k = rnd.randrange(400)
        if op == 0:
            key, val = "py:s:%d" % k, "v%d" % i
            if rc.set(key, val) is not True:
                fail("SET %s" % key)
            strs[key] = val
        elif op == 1:
            key = "py:s:%d" % k
            got = rc.get(key)
            if got != strs.get(key):
                fail("GET %s = %r, want %r" % (key, got, strs.get(key)))
        elif op == 2:
            key = "py:c:%d" % (k % 40)
            counters[key] = counters.get(key, 0) + 1
            got = rc.incr(key)
            if got != counters[key]:
                fail("INCR %s = %r, want %r" % (key, got, counters[key]))
        elif op == 3:
            key, field = "py:h:%d" % (k % 60), "f%d" % (i % 13)
            hashes.setdefault(key, {})[field] = str(i)
            rc.hset(key, field, i)
            got = rc.hget(key, field)
            if got != str(i):
                fail("HGET %s %s = %r, want %r" % (key, field, got, str(i)))
        elif op == 4:
            key = "py:l:%d" % (k % 60)
            lists.setdefault(key, []).insert(0, str(i))
            got = rc.lpush(key, i)
            if got != len(lists[key]):
                fail("LPUSH %s = %r, want %r" % (key, got, len(lists[key])))
        else:
            tag = "{py%d}" % (k % 50)
            vals = {tag + "a": "a%d" % i, tag + "b": "b%d" % i}
            if rc.mset(vals) is not True:
                fail("MSET %r" % vals)
            got = rc.mget([tag + "a", tag + "b", tag + "none"])
            if got != [vals[tag + "a"], vals[tag + "b"], None]:
                fail("MGET %s = %r" % (tag, got))
            strs.update(vals)
        ops += 1

    for key, want in strs.items():
        if rc.get(key) != want:
            fail("final GET %s = %r, want %r" % (key, rc.get(key), want))
        ops += 1
    for key, want in counters.items():
        if rc.get(key) != str(want):
            fail("final GET %s = %r, want %r" % (key, rc.get(key), want))
        ops += 1
    for key, want in hashes.items():
        if rc.hgetall(key) != want:
            fail("HGETALL %s = %r, want %r" % (key, rc.hgetall(key), want))
        ops += 1
    for key, want in lists.items():
        if rc.lrange(key, 0, -1) != want:
            fail("LRANGE %s = %r, want %r" % (key, rc.lrange(key, 0, -1), want))
        ops += 1

    per_node = {}
    for node in rc.get_primaries():
        per_node[node.name] = rc.dbsize(target_nodes=node)
    if any(v == 0 for v in per_node.values()):
        fail("a master holds no keys: %r" % per_node)
    want = len(strs) + len(counters) + len(hashes) + len(lists)
    if sum(per_node.values()) != want:
        fail("DBSIZE over the masters %r, want %d in all" % (per_node, want))
    rc.close()
    print("ok: %d operations checked, keys per master %r" % (ops, per_node))


if __name__ == "__main__":
    main()
