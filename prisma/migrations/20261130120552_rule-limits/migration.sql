-- AlterTable
ALTER TABLE "PolicyRule" ADD COLUMN "optionsJson" TEXT;
