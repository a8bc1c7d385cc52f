import PXTools

await PXMultiCall.main(PXServe.self)
