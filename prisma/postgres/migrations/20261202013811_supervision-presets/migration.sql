-- AlterTable
ALTER TABLE "Agent" ADD COLUMN     "preset" TEXT;

-- AlterTable
ALTER TABLE "Workspace" ADD COLUMN     "preset" TEXT NOT NULL DEFAULT 'balanced';
