-- luacheck's settings for the Redis scripts: `npm run lint:lua` (scripts/lint-lua.ts) lints each script as
-- Redis runs it, its includes put in, and reports on the lines of the .lua files.
-- Redis runs Lua 5.1 with its own libraries added and the file, process and module ones taken away.
std = 'lua51'
not_globals = { 'io', 'os', 'require', 'dofile', 'loadfile', 'module', 'package', 'debug', 'print' }
read_globals = {
  -- what Redis gives a script sent with EVAL/EVALSHA (a function gets KEYS and ARGV as its arguments)
  'KEYS', 'ARGV',
  redis = { fields = {
    'call', 'pcall', 'error_reply', 'status_reply', 'sha1hex', 'log', 'setresp', 'set_repl', 'replicate_commands',
    'breakpoint', 'debug', 'acl_check_cmd', 'register_function', 'REPL_ALL', 'REPL_AOF', 'REPL_REPLICA', 'REPL_SLAVE',
    'REPL_NONE', 'LOG_DEBUG', 'LOG_VERBOSE', 'LOG_NOTICE', 'LOG_WARNING', 'REDIS_VERSION', 'REDIS_VERSION_NUM'
  } },
  'cjson', 'cmsgpack', 'bit', 'struct'
}
-- No limit, as the TypeScript has none; the longest line, records.lua's field list, is one line on purpose.
max_line_length = false

files['src/settlement/lua/not-posted.lua'] = {
  -- settleRecord (includes/settlement.lua) calls windowRemove of limits.lua, which this script does not include:
  -- it never calls settleRecord, and Lua looks a global up only when the line runs. Including limits.lua would
  -- change the script's text, which belongs to a change of the script, not to its linting.
  ignore = { '113/windowRemove' }
}
