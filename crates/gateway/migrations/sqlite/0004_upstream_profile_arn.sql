-- The profile of an organization (IAM Identity Center) account, looked up
-- once when the user connects (ListAvailableProfiles) and sent with every
-- primary call of theirs; NULL for individual accounts and when the lookup
-- found none.
ALTER TABLE user_upstream_credentials ADD COLUMN profile_arn TEXT;
