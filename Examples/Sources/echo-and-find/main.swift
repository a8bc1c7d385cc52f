// echo-and-find PEER [PatientID]: is the peer there, then its studies (those of one patient).
//
//     echo-and-find ORTHANC@127.0.0.1:4242 P1
import PX

let arguments = Array(CommandLine.arguments.dropFirst())
guard let peer = arguments.first else { fatalError("usage: echo-and-find PEER [PatientID]") }

// A peer as the commands take it: AE@host:port, host:AE:port, a DICOMweb URL or a config node name.
let pacs = try await PX.place(peer)

// px-echo's data: {"host", "port", "calledAETitle", "callingAETitle", "dimseStatus"}.
print(PX.json(try await pacs.echo()))

// Each study as it arrives...
let keys = arguments.count > 1 ? ["PatientID": arguments[1]] : [:]
for try await study in pacs.find(.study, keys) {
    print(study.string(.studyInstanceUID) ?? "", study.string(.patientName) ?? "", separator: "\t")
}

// ...or all of them, as px-find --level study prints its data.
print(PX.json(try await pacs.findAll(.study, keys)))
