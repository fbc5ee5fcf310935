-- Neovim's built-in LSP client against `evallint server` (tests/test_neovim.py runs it as
-- `nvim --headless -u NONE -c "luafile tests/neovim_client.lua"`).
--
-- It opens a judge prompt and a judge agent in the project EVALLINT_NVIM_ROOT, waits for their
-- diagnostics, applies the agent's quick fix through vim.lsp.buf.code_action (choosing it as a
-- user would in the menu), waits for the diagnostics to clear, writes the buffer, stops the
-- server, and writes what it saw as JSON to EVALLINT_NVIM_OUT. Every wait is bounded by
-- EVALLINT_NVIM_TIMEOUT (ms); an error is written to the JSON too, and Neovim exits non-zero.
-- Works on Neovim 0.7 (vim.lsp.start_client + buf_attach_client; code_action(context)) and on
-- 0.8+ (vim.lsp.start; code_action{context, filter, apply}).

local root = (assert(os.getenv("EVALLINT_NVIM_ROOT"), "EVALLINT_NVIM_ROOT"))
local out_path = (assert(os.getenv("EVALLINT_NVIM_OUT"), "EVALLINT_NVIM_OUT"))
local cmd = vim.fn.json_decode((assert(os.getenv("EVALLINT_NVIM_CMD"), "EVALLINT_NVIM_CMD")))
local timeout = tonumber(os.getenv("EVALLINT_NVIM_TIMEOUT") or "30000")

local v = vim.version()
local obs = { nvim = string.format("%d.%d.%d", v.major, v.minor, v.patch), steps = {} }
local published = {} -- uri -> the last LSP diagnostics published for it, as sent
local versions = {} -- uri -> the document version of that publication

local function step(name)
  table.insert(obs.steps, name)
end

local function wait_for(what, cond)
  if not vim.wait(timeout, cond, 20) then
    error("timed out after " .. timeout .. " ms waiting for " .. what)
  end
end

local function uri_of(bufnr)
  return vim.uri_from_bufnr(bufnr)
end

-- what the editor shows: vim.diagnostic's entries for a buffer, by code
local function shown(bufnr)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(out, {
      code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code),
      lnum = d.lnum,
      col = d.col,
      message = d.message,
      source = d.source,
    })
  end
  return out
end

local function shows(bufnr, code)
  for _, d in ipairs(shown(bufnr)) do
    if d.code == code then
      return true
    end
  end
  return false
end

local function raw(bufnr, code)
  for _, d in ipairs(published[uri_of(bufnr)] or {}) do
    if d.code == code then
      return d
    end
  end
  return nil
end

local config = {
  name = "evallint",
  cmd = cmd,
  cmd_cwd = root,
  root_dir = root,
  init_options = { debounce = 0.05, cache = false },
  handlers = {
    ["textDocument/publishDiagnostics"] = function(err, result, ctx, cfg)
      published[result.uri] = result.diagnostics
      versions[result.uri] = result.version
      return vim.lsp.handlers["textDocument/publishDiagnostics"](err, result, ctx, cfg)
    end,
  },
}

local client_id

local function attach()
  if vim.lsp.start then -- 0.8+: starts the server once, then reuses it for the same root
    client_id = vim.lsp.start(config)
  else
    client_id = client_id or vim.lsp.start_client(config)
    vim.lsp.buf_attach_client(0, client_id)
  end
  assert(client_id, "the client did not start")
end

local function open(rel)
  vim.cmd("edit " .. vim.fn.fnameescape(root .. "/" .. rel))
  attach()
  return vim.api.nvim_get_current_buf()
end

local function run()
  -- 1. the judge prompt: EL102, with a link to the rule's page, and no quick fix for it
  local judge = open("prompts/judge.j2")
  step("opened judge")
  wait_for("EL102 on the judge prompt", function()
    return shows(judge, "EL102")
  end)
  local d102 = raw(judge, "EL102")
  obs.judge = {
    shown = shown(judge),
    href = d102.codeDescription and d102.codeDescription.href or vim.NIL,
  }
  local replies = vim.lsp.buf_request_sync(judge, "textDocument/codeAction", {
    textDocument = { uri = uri_of(judge) },
    range = d102.range,
    context = { diagnostics = { d102 }, only = { "quickfix" } },
  }, timeout)
  local offered = {}
  for _, reply in pairs(replies or {}) do
    for _, action in ipairs(reply.result or {}) do
      table.insert(offered, action.title)
    end
  end
  obs.judge.quick_fixes = offered
  step("judge diagnosed")

  -- 2. the judge agent: EL402, fixed through the code action menu
  local agent = open(".claude/agents/judge.md")
  step("opened agent")
  wait_for("EL402 on the judge agent", function()
    return shows(agent, "EL402")
  end)
  local d402 = raw(agent, "EL402")
  obs.agent = { before = shown(agent) }
  vim.api.nvim_win_set_cursor(0, { d402.range.start.line + 1, d402.range.start.character })

  local titles = {}
  local real_select = vim.ui.select
  vim.ui.select = function(items, opts, on_choice) -- the user picks the EL402 fix
    for i, item in ipairs(items) do
      local title = opts.format_item and opts.format_item(item) or tostring(item)
      table.insert(titles, title)
      if title:find("EL402", 1, true) then
        return on_choice(item, i)
      end
    end
    return on_choice(nil, nil)
  end
  local context = { diagnostics = { d402 }, only = { "quickfix" } }
  local before = vim.api.nvim_buf_get_changedtick(agent)
  if vim.fn.has("nvim-0.8") == 1 then
    vim.lsp.buf.code_action({
      context = context,
      apply = true,
      filter = function(action)
        table.insert(titles, action.title)
        return action.title:find("EL402", 1, true) ~= nil
      end,
    })
  else
    vim.lsp.buf.code_action(context)
  end
  wait_for("the quick fix to change the buffer", function()
    return vim.api.nvim_buf_get_changedtick(agent) ~= before
  end)
  vim.ui.select = real_select
  obs.agent.offered = titles
  obs.agent.lines = vim.api.nvim_buf_get_lines(agent, 0, -1, false)
  step("fix applied")

  -- 3. the server lints the edited buffer (a newer version): EL402 is gone
  local uri = uri_of(agent)
  local edited = (vim.lsp.util.buf_versions or {})[agent] or 0
  wait_for("diagnostics for the edited agent", function()
    return versions[uri] ~= nil and versions[uri] >= edited and not shows(agent, "EL402")
  end)
  obs.agent.after = shown(agent)
  obs.agent.published_version = versions[uri]
  obs.agent.edited_version = edited
  vim.cmd("silent write")
  step("agent written")
  obs.judge.still = shown(judge)

  -- 4. a clean shutdown
  vim.lsp.stop_client(client_id)
  wait_for("the server to stop", function()
    return vim.lsp.get_client_by_id(client_id) == nil
  end)
  step("server stopped")
end

local ok, err = xpcall(run, debug.traceback)
obs.ok = ok
obs.error = ok and vim.NIL or tostring(err)
vim.fn.writefile({ vim.fn.json_encode(obs) }, out_path)
vim.cmd(ok and "qall!" or "cquit! 3")
