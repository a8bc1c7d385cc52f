import PXTools

await PXPush.main()
