-- A sync that fails part-way is resumed, not started over (docs/decisions/0008): each run
-- records the page size it asked for, the page its first pass began at, and the page
-- through which everything it fetched is committed (NULL while the pages have not proven
-- newest first: such a run cannot be resumed by page). announced_total is the total the
-- platform announced on the run's first page, the base of the non-convergence bound.
ALTER TABLE `sync_runs` ADD `per_page` integer;--> statement-breakpoint
ALTER TABLE `sync_runs` ADD `start_page` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `sync_runs` ADD `committed_page` integer;--> statement-breakpoint
ALTER TABLE `sync_runs` ADD `resumed_from_run` integer;--> statement-breakpoint
ALTER TABLE `sync_runs` ADD `announced_total` integer;
