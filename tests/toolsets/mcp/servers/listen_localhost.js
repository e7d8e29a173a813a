// Preloaded with `node --require` so test servers that listen on all interfaces bind only
// 127.0.0.1: Node's listen(port, cb) and listen({port}) forms get the loopback host.
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "object" && args[0] !== null && !Array.isArray(args[0])) {
    args[0] = { ...args[0], host: "127.0.0.1" };
  } else if (typeof args[0] === "number" || /^\d+$/.test(String(args[0]))) {
    if (typeof args[1] !== "string") args.splice(1, 0, "127.0.0.1");
    else args[1] = "127.0.0.1";
  }
  return listen.apply(this, args);
};
