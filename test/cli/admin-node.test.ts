import { describe, expect, it } from "vitest";
import { primariesTable } from "../../src/cli/commands/admin.js";

/**
 * `shoal admin node`'s table of the primaries a node holds and their standbys (the multi-node
 * answer it renders is checked in test/nodes/partitions.test.ts): a person sees at a glance a
 * group with no standby, which no automatic failover can move, and a group that is isolated.
 */
describe("the standbys table of shoal admin node", () => {
  it("prints nothing for a node holding no primary with standbys", () => {
    expect(primariesTable([])).toBe("");
  });

  it("names each group's standbys, those joining, and whether it serves", () => {
    const text = primariesTable([
      { group_id: "g-1", standbys: ["aws-eu-west-1", "aws-ap-south-1"], joining: [], isolated: false },
      { group_id: "g-2", standbys: [], joining: ["aws-eu-west-1"], isolated: true },
    ]);
    const lines = text.trim().split("\n");
    expect(lines[0]).toMatch(/^GROUP\s+STANDBYS\s+JOINING\s+STATE$/);
    expect(lines[1]).toMatch(/^g-1\s+aws-eu-west-1, aws-ap-south-1\s+-\s+serving$/);
    expect(lines[2]).toMatch(/^g-2\s+none \(no automatic failover\)\s+aws-eu-west-1\s+isolated$/);
  });
});
