import PXTools

await PXMultiCall.main(PXPush.self)
