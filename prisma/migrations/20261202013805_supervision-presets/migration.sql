-- AlterTable
ALTER TABLE "Agent" ADD COLUMN "preset" TEXT;

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Workspace" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "root" TEXT NOT NULL,
    "hostId" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "preset" TEXT NOT NULL DEFAULT 'balanced'
);
INSERT INTO "new_Workspace" ("createdAt", "hostId", "id", "root") SELECT "createdAt", "hostId", "id", "root" FROM "Workspace";
DROP TABLE "Workspace";
ALTER TABLE "new_Workspace" RENAME TO "Workspace";
CREATE UNIQUE INDEX "Workspace_root_key" ON "Workspace"("root");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
