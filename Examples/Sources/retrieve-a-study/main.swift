// retrieve-a-study PLACE StudyInstanceUID DESTINATION: makes sure DESTINATION (a folder, zip:DIR, a node)
// holds the study, retrieving only what it lacks, every file as the source stores it.
//
//     retrieve-a-study ORTHANC@127.0.0.1:4242 1.2.3.4 /data/in
import PX

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 3 else { fatalError("usage: retrieve-a-study PLACE StudyInstanceUID DESTINATION") }

let source = try await PX.place(arguments[0])
let destination = try await PX.destination(arguments[2])  // made when missing

// C-GET from a node, WADO-RS from a DICOMweb service, copies from a folder or a zip folder.
let summary = try await source.retrieve(study: arguments[1], into: destination)

// px-sync's data: {"found", "alreadyPresent", "transferred", ..., "studies": [...]}.
print(PX.json(summary))
