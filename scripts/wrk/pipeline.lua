-- wrk script: send requests 16 deep on each connection (pipelining).
-- Depth comes from the environment (PIPELINE_DEPTH), default 16.
local depth = tonumber(os.getenv("PIPELINE_DEPTH") or "16")

init = function(args)
  local r = {}
  for i = 1, depth do
    r[i] = wrk.format(nil, nil)
  end
  req = table.concat(r)
end

request = function()
  return req
end
