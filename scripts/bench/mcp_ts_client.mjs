// Time MCP tool calls as the stock TypeScript client sees them (used by bench_vault.py).
//
//   node mcp_ts_client.mjs '<plan as JSON>'      (run from the folder whose node_modules has
//                                                 @modelcontextprotocol/sdk: bench_vault copies
//                                                 this file into scripts/bench/.cache/node)
//
// The plan: {"servers": {name: {command, args, env}}, "rounds": N,
//            "calls": [{label, server, tool, arguments}]}.
// Every server is started once through StdioClientTransport and listed once (listTools: the
// client then validates each structuredContent against the tool's outputSchema with Ajv,
// as it does by default). Each round makes every call of the plan once, in order, so the
// contenders alternate. Prints one JSON object: {"ms": {label: [ms per round]},
// "first": {label: structuredContent or text of the first answer}, "sdk": version}.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const plan = JSON.parse(process.argv[2]);
const require = createRequire(import.meta.url);
const sdkVersion = JSON.parse(readFileSync(require.resolve("@modelcontextprotocol/sdk/package.json"), "utf8")).version;

const clients = {};
try {
  for (const [name, spec] of Object.entries(plan.servers)) {
    const transport = new StdioClientTransport({ command: spec.command, args: spec.args, env: spec.env, stderr: "ignore" });
    const client = new Client({ name: "h0-bench", version: "0" });
    await client.connect(transport);
    await client.listTools();
    clients[name] = client;
  }
  const ms = {};
  const first = {};
  for (let round = 0; round < plan.rounds; round++) {
    for (const call of plan.calls) {
      const start = performance.now();
      const result = await clients[call.server].callTool({ name: call.tool, arguments: call.arguments });
      const elapsed = performance.now() - start;
      if (result.isError) {
        throw new Error(`${call.label}: ${JSON.stringify(result.content).slice(0, 300)}`);
      }
      (ms[call.label] ??= []).push(elapsed);
      if (round === 0) {
        first[call.label] = result.structuredContent ?? result.content?.[0]?.text ?? null;
      }
    }
  }
  process.stdout.write(JSON.stringify({ ms, first, sdk: sdkVersion }) + "\n");
} finally {
  for (const client of Object.values(clients)) {
    await client.close();
  }
}
