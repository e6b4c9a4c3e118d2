import { describe, expect, it } from "vitest";
import { callStatusOf, ERROR_TABLE, type ErrorName } from "@/lib/errors";

/** How a call that ends with each error is recorded: the tool broke, the target moved, or the call was refused. */
describe("callStatusOf", () => {
  const failed = ["internal", "write_failed", "command_failed_to_start", "fetch_failed", "fetch_timeout"];
  it.each(Object.keys(ERROR_TABLE) as ErrorName[])("%s", (name) => {
    expect(callStatusOf(name)).toBe(failed.includes(name) ? "failed" : name === "conflict" ? "conflict" : "rejected");
  });
});
