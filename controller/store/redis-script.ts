/**
 * The atomic commit, run inside Redis (EVALSHA): preconditions, per-key writes, the revision
 * counter and the change-feed entries happen in one script, so no client ever sees half a commit
 * and the feed can never disagree with the data.
 *
 * KEYS: 1 revision counter (string), 2 data (hash key -> JSON value), 3 key revisions (hash
 *       key -> revision), 4 change feed (stream; entry id "<revision>-0", field c = JSON ops)
 * ARGV: 1 base revision or -1, 2 approximate feed length to keep, 3 number of transactions, then
 *       per transaction: feed JSON, op count, expect count, ops (type p|d, key, value), expects
 *       (key, revision).
 * Values travel as pre-serialised JSON strings: cjson would turn [] into {} on a round trip.
 * Errors start with WEFTCONFLICT (a precondition failed) or WEFTINVALID (malformed call).
 */
export const COMMIT_LUA = `
local rev = tonumber(redis.call('GET', KEYS[1]) or '0')
local base = tonumber(ARGV[1])
if base >= 0 and base ~= rev then
  return redis.error_reply('WEFTCONFLICT base revision ' .. base .. ' is stale (store is at ' .. rev .. ')')
end
local ntx = tonumber(ARGV[3])
if ntx == nil or ntx < 1 then return redis.error_reply('WEFTINVALID no transactions') end
local i = 4
local txs = {}
for t = 1, ntx do
  local tx = { feed = ARGV[i], ops = {}, expects = {} }
  local nops = tonumber(ARGV[i + 1])
  local nexp = tonumber(ARGV[i + 2])
  i = i + 3
  for o = 1, nops do
    tx.ops[o] = { ARGV[i], ARGV[i + 1], ARGV[i + 2] }
    i = i + 3
  end
  for e = 1, nexp do
    tx.expects[e] = { ARGV[i], tonumber(ARGV[i + 1]) }
    i = i + 2
  end
  txs[t] = tx
end
local seen = {}
local r = rev
for t = 1, ntx do
  for _, e in ipairs(txs[t].expects) do
    local cur = seen[e[1]]
    if cur == nil then cur = tonumber(redis.call('HGET', KEYS[3], e[1]) or '0') end
    if cur ~= e[2] then
      return redis.error_reply('WEFTCONFLICT ' .. e[1] .. ' is at revision ' .. cur .. ', expected ' .. e[2])
    end
  end
  r = r + 1
  for _, op in ipairs(txs[t].ops) do
    if op[1] == 'p' then seen[op[2]] = r else seen[op[2]] = 0 end
  end
end
r = rev
for t = 1, ntx do
  r = r + 1
  for _, op in ipairs(txs[t].ops) do
    if op[1] == 'p' then
      redis.call('HSET', KEYS[2], op[2], op[3])
      redis.call('HSET', KEYS[3], op[2], r)
    else
      redis.call('HDEL', KEYS[2], op[2])
      redis.call('HDEL', KEYS[3], op[2])
    end
  end
  redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[2], r .. '-0', 'c', txs[t].feed)
end
redis.call('SET', KEYS[1], r)
return r
`;
