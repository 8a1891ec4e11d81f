package app

// RegisterJobs installs the function of every scheduled-job kind. Each area adds its kinds here.
func RegisterJobs(a *App) {
	registerLedgerJobs(a) // balance.grant_effective, balance.grant_expire
	a.RegisterJob(jobAutoFinalize, a.runAutoFinalize)
	a.RegisterJob(jobRenewSubscription, a.runRenewal)
	registerSettlementJobs(a) // settlement.close, settlement.payout
}
