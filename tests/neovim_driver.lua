-- Drives `schedlang lsp` from inside a real Neovim (tests/test_lsp_neovim.py), started as
--   nvim --headless -u <the docs' init.lua> -c "luafile neovim_driver.lua" broken.sched
-- The buffer has an error; this waits for its diagnostic, hovers, fixes the text, waits for the
-- diagnostics to clear, asks for the code lenses and runs the Plot lens.  It writes what it saw
-- as JSON to $SCHEDLANG_NVIM_OUT and quits, whatever happened (a Lua error is written too).
-- Only what Neovim 0.7 and 0.11+ both have (vim.lsp.get_clients is 0.10's, buf_get_clients 0.7's).
local out = { messages = {}, shown = {} }
local WAIT = tonumber(vim.env.SCHEDLANG_NVIM_WAIT) * 1000

local shown_message = vim.lsp.handlers["window/showMessage"]
vim.lsp.handlers["window/showMessage"] = function(err, result, ctx, config)
  table.insert(out.messages, result.message)
  return shown_message(err, result, ctx, config)
end
-- 0.9 and later show documents: the plot asks for it with external = true, which Neovim's own
-- handler hands to the desktop's viewer (xdg-open); a test must open no window, so this one
-- notes the document and says it was shown
vim.lsp.handlers["window/showDocument"] = function(_, result)
  table.insert(out.shown, result.uri)
  return { success = true }
end

local function clients()
  local found = {}
  local attached = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = 0 }) or vim.lsp.buf_get_clients(0)
  for _, client in pairs(attached) do
    table.insert(found, { name = client.name, encoding = client.offset_encoding })
  end
  return found
end

local function request(method, params)
  for _, answer in pairs(vim.lsp.buf_request_sync(0, method, params, WAIT) or {}) do
    return answer.result or { error = answer.err }
  end
  return { error = "no answer to " .. method }
end

local function checked()  -- the diagnostics once no "still checking" notice is among them
  for _, d in ipairs(vim.diagnostic.get(0)) do
    if d.code == "slow" then return nil end
  end
  return vim.diagnostic.get(0)
end

local function run()
  local version = vim.version()
  out.version = { version.major, version.minor, version.patch }
  vim.wait(WAIT, function() local found = checked() return found and #found > 0 end, 50)
  out.filetype = vim.bo.filetype
  out.clients = clients()
  out.diagnostics = vim.diagnostic.get(0)
  local uri = vim.uri_from_bufnr(0)
  out.hover = request("textDocument/hover", { textDocument = { uri = uri }, position = { line = 1, character = 16 } })
  vim.api.nvim_buf_set_lines(0, 1, 2, false, { "schedule lr = linear(1, 0, 10)" })
  vim.wait(WAIT, function() local found = checked() return found and #found == 0 end, 50)
  out.fixed = vim.diagnostic.get(0)
  out.lenses = request("textDocument/codeLens", { textDocument = { uri = uri } })
  out.plot = request("workspace/executeCommand", { command = "schedlang.plot", arguments = { uri, "lr" } })
  vim.wait(WAIT, function() return #out.messages + #out.shown > 0 end, 50)
end

local ok, problem = pcall(run)
if not ok then out.problem = tostring(problem) end
local file = io.open(vim.env.SCHEDLANG_NVIM_OUT, "w")
file:write(vim.fn.json_encode(out))
file:close()
vim.cmd("qa!")
