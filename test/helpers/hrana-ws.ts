import WebSocket from "ws";

/** A raw Hrana WebSocket: send messages, await replies by request id. */
export async function openHranaSocket(
  url: string,
  protocols: string[] = ["hrana3"],
  headers: Record<string, string> = {},
) {
  const ws = new WebSocket(url, protocols, { headers });
  const inbox: any[] = [];
  const waiting: Array<() => void> = [];
  ws.on("message", (d) => {
    inbox.push(JSON.parse(d.toString()));
    for (const w of waiting.splice(0)) w();
  });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  const next = async (pred: (m: any) => boolean): Promise<any> => {
    for (;;) {
      const i = inbox.findIndex(pred);
      if (i >= 0) return inbox.splice(i, 1)[0];
      await new Promise<void>((r) => waiting.push(r));
    }
  };
  const closed = new Promise<number>((r) => ws.once("close", (code) => r(code)));
  let id = 0;
  const request = async (request: unknown) => {
    const request_id = ++id;
    ws.send(JSON.stringify({ type: "request", request_id, request }));
    return next((m) => m.request_id === request_id);
  };
  return {
    ws,
    next,
    request,
    closed,
    hello: (jwt: string | null) => ws.send(JSON.stringify({ type: "hello", jwt })),
  };
}
